/*
 * demo_amd.c — the simulated MI300X sysfs tree of --demo mi300x (demo_amd.h).
 * The file formats are those of tests/fixtures/sysfs/gen.py (amdgpu_pm.c's
 * attributes, hwmon, KFD topology, gpu_metrics v1.8); the values move with
 * time so the interactive monitor has something to show.
 */
#include "app/demo_amd.h"

#include <errno.h>
#include <stdarg.h>
#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BDF "0000:0c:00.0"
#define NPART 8
#define PART_VRAM 25769803776ull
#define VRAM_TOTAL 205822885888ull
/* gpu_metrics v1.8: size and the offsets written (amdgpu_metrics.c asserts them) */
#define V18_SIZE 3872
#define V18_XCP 344
#define V18_XCP_SIZE 440

struct demo_amd {
    char root[256];
    char dev[512];
    unsigned interval_ms;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop;
    double t;
};

static int put(const char *dir, const char *name, const void *data, size_t len)
{
    char path[1024], tmp[1040];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s.new", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(data, 1, len, f);
    if (fclose(f) != 0 || n != len)
        return -1;
    return rename(tmp, path); /* a reader sees the old file or the new one */
}

static int putf(const char *dir, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int putf(const char *dir, const char *name, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return n < 0 ? -1 : put(dir, name, buf, (size_t)n);
}

static int mkdirs(const char *path)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST)
            return -1;
        *s = '/';
    }
    return mkdir(p, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

static void le16(unsigned char *b, size_t off, unsigned v)
{
    b[off] = (unsigned char)v;
    b[off + 1] = (unsigned char)(v >> 8);
}

static void le32(unsigned char *b, size_t off, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[off + (size_t)i] = (unsigned char)(v >> (8 * i));
}

static void le64(unsigned char *b, size_t off, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[off + (size_t)i] = (unsigned char)(v >> (8 * i));
}

/* The moving files: activity per partition, memory, temperatures, power. */
static int write_values(struct demo_amd *d)
{
    double t = d->t;
    unsigned busy[NPART];
    double sum = 0;
    for (int k = 0; k < NPART; k++) {
        double v = 50 + 45 * sin(t * 0.25 + k * 0.8);
        busy[k] = (unsigned)(v < 0 ? 0 : v > 100 ? 100 : v);
        sum += busy[k];
    }
    unsigned gpu = (unsigned)(sum / NPART + 0.5);
    unsigned mem = gpu / 3 + 5;
    unsigned hot = 45 + gpu / 4, hbm = 40 + gpu / 5;
    unsigned power = 180 + gpu * 5;
    static uint64_t energy; /* 2^-16 J */
    energy += (uint64_t)(power * 65536.0 * d->interval_ms / 1000.0);
    static unsigned char b[V18_SIZE];
    memset(b, 0xff, sizeof(b));
    le16(b, 0, V18_SIZE);
    b[2] = 1;
    b[3] = 8;
    le16(b, 4, hot);
    le16(b, 6, hbm);
    le16(b, 10, power);
    le16(b, 12, gpu);
    le16(b, 14, mem);
    le64(b, 24, energy);
    le16(b, 296, 1400 + gpu * 7); /* current_gfxclk[0] */
    le16(b, 336, 1300);           /* current_uclk */
    le16(b, 338, NPART);          /* num_partition */
    for (int k = 0; k < NPART; k++)
        le32(b, V18_XCP + (size_t)V18_XCP_SIZE * (size_t)k, busy[k]);
    char hw[600];
    snprintf(hw, sizeof(hw), "%s/hwmon/hwmon0", d->dev);
    uint64_t used = 0;
    for (int k = 0; k < NPART; k++)
        used += (uint64_t)busy[k] * (PART_VRAM / 110);
    int rc = put(d->dev, "gpu_metrics", b, sizeof(b));
    rc |= putf(d->dev, "gpu_busy_percent", "%u\n", gpu);
    rc |= putf(d->dev, "mem_busy_percent", "%u\n", mem);
    rc |= putf(d->dev, "mem_info_vram_used", "%llu\n", (unsigned long long)used);
    rc |= putf(d->dev, "pp_dpm_sclk", "0: 500Mhz\n1: %uMhz *\n2: 2100Mhz\n", 1400 + gpu * 7);
    rc |= putf(hw, "temp2_input", "%u\n", hot * 1000);
    rc |= putf(hw, "temp3_input", "%u\n", hbm * 1000);
    rc |= putf(hw, "power1_input", "%u\n", power * 1000000u);
    return rc ? -1 : 0;
}

static int write_tree(struct demo_amd *d)
{
    char p[1024], q[1024];
    snprintf(d->dev, sizeof(d->dev), "%s/devices/pci0000:00/%s", d->root, BDF);
    snprintf(p, sizeof(p), "%s/drm/renderD128", d->dev);
    snprintf(q, sizeof(q), "%s/hwmon/hwmon0", d->dev);
    int rc = mkdirs(p) | mkdirs(q);
    snprintf(p, sizeof(p), "%s/bus/pci/drivers/amdgpu", d->root);
    rc |= mkdirs(p);
    snprintf(p, sizeof(p), "%s/driver", d->dev);
    rc |= symlink("../../../bus/pci/drivers/amdgpu", p);
    snprintf(p, sizeof(p), "%s/class/drm/card0", d->root);
    rc |= mkdirs(p);
    snprintf(p, sizeof(p), "%s/class/drm/card0/device", d->root);
    rc |= symlink("../../../devices/pci0000:00/" BDF, p);
    rc |= putf(d->dev, "vendor", "0x1002\n") | putf(d->dev, "device", "0x74a1\n");
    rc |= putf(d->dev, "product_name", "AMD Instinct MI300X (demo)\n");
    rc |= putf(d->dev, "unique_id", "de3000c0ffee0001\n");
    rc |= putf(d->dev, "current_compute_partition", "CPX\n");
    rc |= putf(d->dev, "current_memory_partition", "NPS4\n");
    rc |= putf(d->dev, "available_compute_partition", "SPX, DPX, QPX, CPX\n");
    rc |= putf(d->dev, "available_memory_partition", "NPS1, NPS4\n");
    rc |= putf(d->dev, "mem_info_vram_total", "%llu\n", VRAM_TOTAL);
    rc |= putf(d->dev, "pp_dpm_mclk", "0: 900Mhz\n1: 1300Mhz *\n");
    rc |= putf(d->dev, "current_link_speed", "32.0 GT/s PCIe\n");
    rc |= putf(d->dev, "current_link_width", "16\n");
    char hw[600];
    snprintf(hw, sizeof(hw), "%s/hwmon/hwmon0", d->dev);
    rc |= putf(hw, "temp2_label", "junction\n") | putf(hw, "temp3_label", "mem\n");
    rc |= putf(hw, "power1_cap", "750000000\n");
    for (int k = 0; k < NPART; k++) {
        snprintf(p, sizeof(p), "%s/class/kfd/kfd/topology/nodes/%d/mem_banks/0", d->root, k + 1);
        rc |= mkdirs(p);
        rc |= putf(p, "properties", "heap_type 1\nsize_in_bytes %llu\n", PART_VRAM);
        snprintf(p, sizeof(p), "%s/class/kfd/kfd/topology/nodes/%d", d->root, k + 1);
        rc |= putf(p, "properties",
                   "num_xcc 1\ndrm_render_minor %d\nlocation_id %d\ndomain 0\n", 128 + k,
                   0x0c << 8);
    }
    return rc || write_values(d) ? -1 : 0;
}

static void *writer(void *arg)
{
    struct demo_amd *d = arg;
    pthread_mutex_lock(&d->lock);
    while (!d->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)d->interval_ms * 1000000ull;
        ts.tv_sec += (time_t)(ns / 1000000000ull);
        ts.tv_nsec = (long)(ns % 1000000000ull);
        pthread_cond_timedwait(&d->cond, &d->lock, &ts);
        if (d->stop)
            break;
        d->t += d->interval_ms / 1000.0;
        write_values(d);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

struct demo_amd *demo_amd_start(unsigned interval_ms, char *root, size_t rootlen, char *err,
                                size_t errlen)
{
    struct demo_amd *d = calloc(1, sizeof(*d));
    if (!d) {
        snprintf(err, errlen, "--demo %s: out of memory", DEMO_AMD_SCENARIO);
        return NULL;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(d->root, sizeof(d->root), "%s/migmon-demo-amd-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    d->interval_ms = interval_ms ? interval_ms : 1000;
    d->t = 0;
    if (!mkdtemp(d->root)) {
        snprintf(err, errlen, "--demo %s: %s: %s", DEMO_AMD_SCENARIO, d->root, strerror(errno));
        free(d);
        return NULL;
    }
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->cond, NULL);
    if (write_tree(d) != 0) {
        snprintf(err, errlen, "--demo %s: cannot write the tree under %s", DEMO_AMD_SCENARIO,
                 d->root);
        nftw(d->root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        free(d);
        return NULL;
    }
    if (pthread_create(&d->thread, NULL, writer, d) != 0) {
        snprintf(err, errlen, "--demo %s: no thread", DEMO_AMD_SCENARIO);
        nftw(d->root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        free(d);
        return NULL;
    }
    snprintf(root, rootlen, "%s", d->root);
    return d;
}

void demo_amd_stop(struct demo_amd *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->lock);
    d->stop = 1;
    pthread_cond_signal(&d->cond);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->thread, NULL);
    nftw(d->root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    pthread_mutex_destroy(&d->lock);
    pthread_cond_destroy(&d->cond);
    free(d);
}

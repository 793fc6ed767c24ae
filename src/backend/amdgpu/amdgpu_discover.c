/*
 * amdgpu_discover.c — amdgpu GPUs under <sysfs>/class/drm, and their
 * compute partitions.
 *
 * A GPU is a cardN whose device is a PCI function bound to the amdgpu
 * driver. Partition nodes (cardM under /sys/devices/platform/amdgpu_xcp_*)
 * carry no sysfs of their own; which GPU and which partition they are
 * comes from KFD topology: each partition is a KFD node with its own
 * drm_render_minor and its GPU's location_id and domain, and the nodes of
 * one GPU in render-minor order are partitions 0, 1, … (partition 0 is the
 * PCI device's own node). The same mapping ROCm's k8s-device-plugin uses.
 */
#include "backend/amdgpu/amdgpu.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/text.h"

/* How long a GPU's identity and partitions may take to read at start
 * (each stage): past it a hung GPU is listed with what was read. */
#define AMD_OPEN_WAIT_NS 1000000000ull

static int render_minor_of(const char *dev)
{
    char path[AMD_PATH_LEN + 8];
    amd_fmt(path, sizeof(path), "%s/drm", dev);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int minor = -1;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, "renderD", 7) == 0)
            minor = atoi(e->d_name + 7);
    closedir(d);
    return minor;
}

static void first_hwmon(const char *dev, char *out, size_t len)
{
    char path[AMD_PATH_LEN + 8];
    amd_fmt(path, sizeof(path), "%s/hwmon", dev);
    out[0] = '\0';
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    char best[64] = "";
    while ((e = readdir(d)))
        if (strncmp(e->d_name, "hwmon", 5) == 0 && (!best[0] || strcmp(e->d_name, best) < 0))
            amd_fmt(best, sizeof(best), "%s", e->d_name);
    closedir(d);
    if (best[0])
        amd_fmt(out, len, "%s/%s", path, best);
}

/* "0000:0c:00.0" → domain and location_id (bus << 8 | dev << 3 | fn). */
static int bdf_location(const char *bdf, unsigned *domain, unsigned *loc)
{
    unsigned dom, bus, dev, fn;
    if (sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
        return -1;
    *domain = dom;
    *loc = bus << 8 | dev << 3 | fn;
    return 0;
}

/* One "key value" of a KFD properties file ("%llu" each); -1 when absent
 * or not a number (a minus sign included). */
static long long kfd_prop(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, key, kl) != 0 || p[kl] != ' ')
            continue;
        char num[32];
        size_t n = strcspn(p + kl + 1, "\n");
        const char *why;
        uint64_t v;
        if (n >= sizeof(num))
            return -1;
        memcpy(num, p + kl + 1, n);
        num[n] = '\0';
        return amd_parse_u64(num, &v, &why) == 0 && v <= LLONG_MAX ? (long long)v : -1;
    }
    return -1;
}

static int by_minor(const void *a, const void *b)
{
    const struct amd_part *x = a, *y = b;
    return (x->render_minor > y->render_minor) - (x->render_minor < y->render_minor);
}

/* The KFD nodes of g: its partitions when there are more than one. */
static void find_partitions(struct amd_state *st, struct amd_gpu *g)
{
    unsigned dom, loc;
    g->nparts = 0;
    if (bdf_location(g->bus_id, &dom, &loc) != 0)
        return;
    char dir[AMD_PATH_LEN + 64];
    amd_fmt(dir, sizeof(dir), "%s/class/kfd/kfd/topology/nodes", st->sysfs);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct amd_part found[AMD_NUM_XCP];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < AMD_NUM_XCP) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[AMD_PATH_LEN + 128], text[4096], why[AMD_WHY_LEN];
        amd_fmt(path, sizeof(path), "%s/%s/properties", dir, e->d_name);
        if (amd_read_text(g->io, path, text, sizeof(text), why, sizeof(why)) != AMD_READ_OK)
            continue;
        long long minor = kfd_prop(text, "drm_render_minor");
        if (minor <= 0 || kfd_prop(text, "location_id") != (long long)loc ||
            kfd_prop(text, "domain") != (long long)dom)
            continue;
        struct amd_part *p = &found[n++];
        memset(p, 0, sizeof(*p));
        p->render_minor = (int)minor;
        amd_fmt(p->kfd_node, sizeof(p->kfd_node), "%s/%s", dir, e->d_name);
        long long size;
        char bank[AMD_PATH_LEN + 64];
        amd_fmt(bank, sizeof(bank), "%s/mem_banks/0/properties", p->kfd_node);
        int rc = amd_read_text(g->io, bank, text, sizeof(text), why, sizeof(why));
        if (rc == AMD_READ_OK && (size = kfd_prop(text, "size_in_bytes")) >= 0)
            p->vram_total = metric_direct((double)size);
        else if (rc == AMD_READ_OK)
            p->vram_total = metric_none("KFD mem_banks/0/properties: no size_in_bytes (a number)");
        else { /* read once: the reason is kept with the partition */
            p->vram_total = metric_none("KFD mem_banks/0/properties: not read");
            memcpy(p->vram_why, why, sizeof(p->vram_why));
        }
    }
    closedir(d);
    if (n < 2)
        return; /* one node: the whole GPU (SPX), no partitions to show */
    qsort(found, (size_t)n, sizeof(found[0]), by_minor);
    for (int i = 0; i < n; i++) {
        found[i].xcp = i;
        g->parts[i] = found[i];
    }
    g->nparts = n;
}

/* Product names by PCI device id, when the board has no FRU data. */
static const char *name_of_id(unsigned id, const char **arch)
{
    static const struct {
        unsigned id;
        const char *name, *arch;
    } ids[] = {
        {0x740c, "AMD Instinct MI250X / MI250", "CDNA2"},
        {0x740f, "AMD Instinct MI210", "CDNA2"},
        {0x74a1, "AMD Instinct MI300X", "CDNA3"},
        {0x74a0, "AMD Instinct MI300A", "CDNA3"},
        {0x74b5, "AMD Instinct MI300X VF", "CDNA3"},
        {0x744c, "AMD Radeon RX 7900 XT/XTX", "RDNA3"},
    };
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
        if (ids[i].id == id) {
            *arch = ids[i].arch;
            return ids[i].name;
        }
    *arch = "";
    return NULL;
}

/* An available_*_partition file: the modes the GPU can be switched to,
 * ", "-joined ("Not supported": none). Read once: they change only with a
 * driver reload. */
static void read_modes(struct amd_io *io, const char *dev, const char *name, char *out,
                       size_t len, char *why, size_t whylen)
{
    char path[AMD_PATH_LEN + 48], buf[128];
    amd_fmt(path, sizeof(path), "%s/%s", dev, name);
    why[0] = '\0';
    out[0] = '\0';
    if (amd_read_text(io, path, buf, sizeof(buf), why, whylen) != AMD_READ_OK)
        return;
    if (strcmp(buf, "Not supported") != 0)
        amd_fmt(out, len, "%s", buf);
}

/* A PCI id file ("0x74a1"); 0 when it is not one. */
static unsigned pci_id(const char *text)
{
    char *end;
    if (strncmp(text, "0x", 2) != 0 || !isxdigit((unsigned char)text[2]))
        return 0;
    unsigned long v = strtoul(text + 2, &end, 16);
    return *end == '\0' && v <= 0xffff ? (unsigned)v : 0;
}

/* Identity and modes, read once at start; a file that cannot be read
 * leaves its field as it would be without the file. */
static void fill_identity(struct amd_gpu *g)
{
    char path[AMD_PATH_LEN + 32], buf[128], why[AMD_WHY_LEN];
    unsigned vid = 0, did = 0;
    amd_fmt(path, sizeof(path), "%s/vendor", g->dev);
    if (amd_read_text(g->io, path, buf, sizeof(buf), why, sizeof(why)) == AMD_READ_OK)
        vid = pci_id(buf);
    amd_fmt(path, sizeof(path), "%s/device", g->dev);
    if (amd_read_text(g->io, path, buf, sizeof(buf), why, sizeof(why)) == AMD_READ_OK)
        did = pci_id(buf);
    const char *arch;
    const char *known = name_of_id(did, &arch);
    amd_fmt(g->arch, sizeof(g->arch), "%s", arch);
    amd_fmt(path, sizeof(path), "%s/product_name", g->dev);
    if (amd_read_text(g->io, path, buf, sizeof(buf), why, sizeof(why)) == AMD_READ_OK && buf[0])
        text_take(g->name, sizeof(g->name), buf); /* the board's text: cleaned here (text.h) */
    else if (known)
        amd_fmt(g->name, sizeof(g->name), "%s", known);
    else
        amd_fmt(g->name, sizeof(g->name), "AMD GPU %04x:%04x", vid, did);
    amd_fmt(path, sizeof(path), "%s/unique_id", g->dev);
    if (amd_read_text(g->io, path, buf, sizeof(buf), why, sizeof(why)) == AMD_READ_OK && buf[0])
        amd_fmt(g->uuid, sizeof(g->uuid), "AMD-%s", buf);
    else
        amd_fmt(g->uuid, sizeof(g->uuid), "AMD-PCI-%s", g->bus_id);
    amd_fmt(path, sizeof(path), "%s/serial_number", g->dev);
    if (amd_read_text(g->io, path, buf, sizeof(buf), why, sizeof(why)) == AMD_READ_OK)
        amd_fmt(g->serial, sizeof(g->serial), "%s", buf);
    amd_fmt(path, sizeof(path), "%s/current_compute_partition", g->dev);
    if (amd_read_text(g->io, path, buf, sizeof(buf), why, sizeof(why)) == AMD_READ_OK)
        amd_fmt(g->compute_mode, sizeof(g->compute_mode), "%s", buf);
    amd_fmt(path, sizeof(path), "%s/current_memory_partition", g->dev);
    if (amd_read_text(g->io, path, buf, sizeof(buf), why, sizeof(why)) == AMD_READ_OK)
        amd_fmt(g->memory_mode, sizeof(g->memory_mode), "%s", buf);
    if (g->compute_mode[0]) {
        read_modes(g->io, g->dev, "available_compute_partition", g->compute_avail,
                   sizeof(g->compute_avail), g->compute_avail_why, sizeof(g->compute_avail_why));
        read_modes(g->io, g->dev, "available_memory_partition", g->memory_avail,
                   sizeof(g->memory_avail), g->memory_avail_why, sizeof(g->memory_avail_why));
    }
}

static int by_bus(const void *a, const void *b)
{
    return strcmp(((const struct amd_gpu *)a)->bus_id, ((const struct amd_gpu *)b)->bus_id);
}

int amd_discover(struct amd_state *st)
{
    char dir[AMD_PATH_LEN + 16];
    amd_fmt(dir, sizeof(dir), "%s/class/drm", st->sysfs);
    st->ngpus = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) && st->ngpus < AMD_MAX_GPUS) {
        if (strncmp(e->d_name, "card", 4) != 0 || !e->d_name[4] ||
            strspn(e->d_name + 4, "0123456789") != strlen(e->d_name + 4))
            continue;
        char link[AMD_PATH_LEN + 64], real[PATH_MAX], drv[PATH_MAX];
        amd_fmt(link, sizeof(link), "%s/%s/device", dir, e->d_name);
        if (!realpath(link, real) || strlen(real) >= AMD_PATH_LEN)
            continue;
        amd_fmt(link, sizeof(link), "%s/driver", real);
        ssize_t n = readlink(link, drv, sizeof(drv) - 1);
        if (n <= 0)
            continue;
        drv[n] = '\0';
        const char *base = strrchr(drv, '/');
        if (strcmp(base ? base + 1 : drv, "amdgpu") != 0)
            continue; /* partition nodes are amdgpu_partition_driver's */
        bool seen = false;
        for (int i = 0; i < st->ngpus; i++)
            seen |= strcmp(st->gpus[i].dev, real) == 0;
        if (seen)
            continue;
        struct amd_gpu *g = &st->gpus[st->ngpus++];
        memset(g, 0, sizeof(*g));
        amd_fmt(g->dev, sizeof(g->dev), "%s", real);
        const char *bdf = strrchr(real, '/');
        amd_fmt(g->bus_id, sizeof(g->bus_id), "%s", bdf ? bdf + 1 : real);
        g->render_minor = render_minor_of(real);
        first_hwmon(real, g->hwmon, sizeof(g->hwmon));
        /* no thread (out of resources): reads on this thread, unbounded */
        g->io = amd_io_open();
        amd_io_set_deadline(g->io, clock_mono_ns() + AMD_OPEN_WAIT_NS);
        fill_identity(g);
    }
    closedir(d);
    qsort(st->gpus, (size_t)st->ngpus, sizeof(st->gpus[0]), by_bus);
    for (int i = 0; i < st->ngpus; i++) {
        amd_io_set_deadline(st->gpus[i].io, clock_mono_ns() + AMD_OPEN_WAIT_NS);
        find_partitions(st, &st->gpus[i]);
    }
    return st->ngpus;
}

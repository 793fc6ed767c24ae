/*
 * amdgpu_fdinfo.c — processes on amdgpu GPUs from /proc/PID/fdinfo.
 *
 * Each open DRM file prints drm-driver, drm-pdev (the PCI GPU, also on a
 * partition node), drm-client-id, drm-memory-vram (KiB) and drm-engine-*
 * (busy ns, cumulative). The partition is the fd's target,
 * /dev/dri/renderD<K>, matched to a partition's render minor. GPU % is
 * the gfx + compute ns over the time between two scans, as nvtop computes
 * it; the first sight of a client has none. Bounded: at most AMD_MAX_FDS
 * fdinfo files per scan, and no scan when nothing shows processes.
 */
#include "backend/amdgpu/amdgpu.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "<digits><unit>" (unit "" for none), strictly: no sign, nothing after.
 * 0, or -1. */
static int fd_num(const char *v, const char *unit, uint64_t *out)
{
    char num[32];
    size_t n = strspn(v, "0123456789"), ul = strlen(unit);
    const char *why;
    if (n == 0 || n >= sizeof(num) || strncmp(v + n, unit, ul) != 0 || v[n + ul] != '\0')
        return -1;
    memcpy(num, v, n);
    num[n] = '\0';
    return amd_parse_u64(num, out, &why);
}

int amd_fdinfo_parse(const char *text, struct amd_fdinfo *f)
{
    memset(f, 0, sizeof(*f));
    bool amd = false, client = false;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char line[256];
        if (n >= sizeof(line))
            n = sizeof(line) - 1;
        memcpy(line, p, n);
        line[n] = '\0';
        p += nl ? n + 1 : n;
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = '\0';
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        if (strcmp(line, "drm-driver") == 0) {
            amd = strcmp(v, "amdgpu") == 0;
        } else if (strcmp(line, "drm-pdev") == 0) {
            snprintf(f->pdev, sizeof(f->pdev), "%.31s", v);
        } else if (strcmp(line, "drm-client-id") == 0) {
            client = fd_num(v, "", &f->client_id) == 0;
        } else if (strcmp(line, "drm-memory-vram") == 0) {
            /* always KiB (the legacy key); a value that is not a number, or
             * past 2^54 KiB, is no value */
            uint64_t kib;
            f->has_vram = fd_num(v, " KiB", &kib) == 0 && kib <= UINT64_MAX / 1024;
            f->vram_bytes = f->has_vram ? kib * 1024ull : 0;
        } else if (strcmp(line, "drm-engine-gfx") == 0 ||
                   strcmp(line, "drm-engine-compute") == 0) {
            uint64_t ns;
            bool gfx = line[11] == 'g';
            if (fd_num(v, " ns", &ns) != 0 || ns > UINT64_MAX - f->engine_ns) {
                f->engine_bad = true;
                continue;
            }
            f->engine_ns += ns;
            if (gfx)
                f->has_gfx = true;
            else
                f->has_compute = true;
        }
    }
    return amd && client && f->pdev[0] ? 0 : -1;
}

/* The device of snapshot s (from first) that the fd belongs to. */
static struct device *target(struct amd_state *st, struct snapshot *s, size_t first,
                             const struct amd_fdinfo *f, int minor)
{
    for (int i = 0; i < st->ngpus; i++) {
        struct amd_gpu *g = &st->gpus[i];
        if (strcmp(g->bus_id, f->pdev) != 0)
            continue;
        for (size_t k = first; k < s->ndevices; k++) {
            struct device *d = &s->devices[k];
            if (strcmp(d->pci_bus_id, g->bus_id) != 0)
                continue;
            if (!g->nparts && d->kind == DEV_GPU)
                return d;
            if (g->nparts && d->kind == DEV_MIG &&
                g->parts[d->gi_id].render_minor == minor)
                return d;
        }
        /* a primary-node fd on a partitioned GPU: the GPU itself */
        for (size_t k = first; k < s->ndevices; k++)
            if (s->devices[k].kind == DEV_GPU && strcmp(s->devices[k].pci_bus_id, g->bus_id) == 0)
                return &s->devices[k];
    }
    return NULL;
}

struct found {
    uint32_t pid;
    size_t dev;
    struct amd_fdinfo f;
};

static struct amd_client *client_of(struct amd_state *st, uint32_t pid, uint64_t id)
{
    for (size_t i = 0; i < st->nclients; i++)
        if (st->clients[i].pid == pid && st->clients[i].client_id == id)
            return &st->clients[i];
    if (st->nclients < AMD_MAX_CLIENTS) {
        struct amd_client *c = &st->clients[st->nclients++];
        memset(c, 0, sizeof(*c));
        c->pid = pid;
        c->client_id = id;
        return c;
    }
    return NULL;
}

void amd_scan_processes(struct amd_state *st, struct snapshot *s, size_t first, uint64_t now_ns)
{
    static __thread struct found list[AMD_MAX_CLIENTS];
    size_t nfound = 0, nfds = 0;
    st->gen++;
    st->fds_capped = false;
    DIR *pd = opendir(st->proc);
    struct dirent *pe;
    while (pd && (pe = readdir(pd)) && nfound < AMD_MAX_CLIENTS) {
        if (pe->d_name[0] < '1' || pe->d_name[0] > '9')
            continue;
        uint32_t pid = (uint32_t)strtoul(pe->d_name, NULL, 10);
        char dir[AMD_PATH_LEN + 64];
        amd_fmt(dir, sizeof(dir), "%s/%s/fdinfo", st->proc, pe->d_name);
        DIR *fd = opendir(dir);
        if (!fd)
            continue;
        struct dirent *fe;
        while ((fe = readdir(fd)) && nfound < AMD_MAX_CLIENTS) {
            if (fe->d_name[0] < '0' || fe->d_name[0] > '9')
                continue;
            if (++nfds > AMD_MAX_FDS) {
                st->fds_capped = true;
                break;
            }
            char path[AMD_PATH_LEN + 128], text[4096], lnk[128], why[AMD_WHY_LEN];
            amd_fmt(path, sizeof(path), "%s/%s", dir, fe->d_name);
            struct amd_fdinfo f;
            /* /proc's files: regular ones only, read on this thread */
            if (amd_read_text(NULL, path, text, sizeof(text), why, sizeof(why)) != AMD_READ_OK ||
                amd_fdinfo_parse(text, &f) != 0)
                continue;
            amd_fmt(path, sizeof(path), "%s/%s/fd/%s", st->proc, pe->d_name, fe->d_name);
            ssize_t n = readlink(path, lnk, sizeof(lnk) - 1);
            int minor = -1;
            if (n > 0) {
                lnk[n] = '\0';
                const char *r = strstr(lnk, "renderD");
                if (r)
                    minor = atoi(r + 7);
            }
            struct device *d = target(st, s, first, &f, minor);
            if (!d)
                continue;
            bool dup = false; /* a dup'd fd is the same client */
            for (size_t i = 0; i < nfound; i++)
                dup |= list[i].pid == pid && list[i].f.client_id == f.client_id;
            if (!dup)
                list[nfound++] = (struct found){pid, (size_t)(d - s->devices), f};
        }
        closedir(fd);
        if (st->fds_capped)
            break;
    }
    if (pd)
        closedir(pd);

    /* Grouped by device, as the snapshot keeps them. */
    if (snapshot_reserve_procs(s, s->nprocs + nfound) != 0)
        return;
    for (size_t k = first; k < s->ndevices; k++) {
        struct device *d = &s->devices[k];
        d->proc_first = s->nprocs;
        d->nprocs = 0;
        for (size_t i = 0; i < nfound; i++) {
            if (list[i].dev != k)
                continue;
            const struct amd_fdinfo *f = &list[i].f;
            struct gpu_process *p = &s->procs[s->nprocs++];
            memset(p, 0, sizeof(*p));
            p->pid = list[i].pid;
            p->local_pid = -1;
            p->gi_id = d->kind == DEV_MIG ? d->gi_id : -1;
            p->ci_id = -1;
            p->type = (f->has_compute ? PROC_COMPUTE : 0) | (f->has_gfx ? PROC_GRAPHICS : 0);
            if (!p->type)
                p->type = PROC_COMPUTE;
            p->mem_bytes = f->has_vram ? metric_direct((double)f->vram_bytes)
                                       : metric_none("fdinfo: no drm-memory-vram \"<n> KiB\"");
            p->sm_util = metric_none("fdinfo: first read of this client (GPU % needs two)");
            struct amd_client *c = client_of(st, p->pid, f->client_id);
            bool known = c && c->gen && c->seen_ns && c->seen_ns < now_ns;
            if (f->engine_bad)
                p->sm_util = metric_none("fdinfo: a drm-engine-gfx/compute not \"<n> ns\"");
            else if (known && f->engine_ns >= c->engine_ns) {
                double dns = (double)(f->engine_ns - c->engine_ns);
                double dt = (double)(now_ns - c->seen_ns);
                if (dns <= dt)
                    p->sm_util = metric_direct(100.0 * dns / dt);
                else /* as nvtop: a sample busier than the time is dropped */
                    p->sm_util = metric_none("fdinfo: busy time grew more than the time between reads");
            }
            if (c && !f->engine_bad) {
                c->engine_ns = f->engine_ns;
                c->seen_ns = now_ns;
            }
            if (c) /* a bad read keeps the last good one for the next delta */
                c->gen = st->gen;
            p->mem_util = p->enc_util = p->dec_util = metric_none("not in amdgpu fdinfo");
            d->nprocs++;
        }
        /* A partition's VRAM in use stays none (amd_sample): the sum of
         * these processes' is not it. */
        d->process_count = metric_direct((double)d->nprocs);
    }
    /* Clients not seen in this scan are forgotten. */
    size_t w = 0;
    for (size_t i = 0; i < st->nclients; i++)
        if (st->clients[i].gen == st->gen)
            st->clients[w++] = st->clients[i];
    st->nclients = w;
}

/*
 * dcgm_session.c — the DCGM helper's session: loading libdcgm, connecting
 * to a running nv-hostengine or starting an embedded engine where that is
 * safe, tearing both down, and the records the helper sends (dcgm.h).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/dcgm/dcgm_helper.h"
#include "backend/nvml/nvml_load.h"
#include "core/libpath.h"

void dcgmh_progress(enum dcgm_call call)
{
    struct dcgm_rec_progress r;
    memset(&r, 0, sizeof(r));
    r.call = (uint16_t)call;
    helper_send(DCGM_PROTO_MAGIC, &r, DCGM_REC_PROGRESS, sizeof(r));
}

void dcgmh_heartbeat(bool have)
{
    struct dcgm_rec_cycle r;
    memset(&r, 0, sizeof(r));
    r.have_values = have;
    helper_send(DCGM_PROTO_MAGIC, &r, DCGM_REC_CYCLE, sizeof(r));
}

void dcgmh_send_state(struct dh *d, enum dcgm_state state, enum dcgm_call call, int rc,
                       bool retry, const char *detail)
{
    struct dcgm_rec_state *s = &d->st;
    s->state = (uint16_t)state;
    s->call = (uint16_t)call;
    s->rc = rc;
    s->retry = retry;
    s->source = d->connected ? (d->embedded ? DCGM_SRC_EMBEDDED : DCGM_SRC_HOSTENGINE)
                             : DCGM_SRC_NONE;
    s->watched = d->watched;
    s->left_rc = d->left_rc;
    s->interval_ms = d->interval_ms;
    s->ngpus = (uint16_t)d->ngpus;
    s->nents = (uint16_t)d->nents;
    snprintf(s->detail, sizeof(s->detail), "%s", detail ? detail : "");
    helper_send(DCGM_PROTO_MAGIC, s, DCGM_REC_STATE, sizeof(*s));
}

void dcgmh_send_done(void)
{
    struct dcgm_rec_cycle r;
    memset(&r, 0, sizeof(r));
    helper_send(DCGM_PROTO_MAGIC, &r, DCGM_REC_DONE, sizeof(r));
}

/* ------------------------------------------------------------ loading */

int dcgmh_load(struct dh *d, const char *path, char *detail, size_t dlen)
{
    /* the sonames through libpath (never the current directory); a
     * --dcgm-lib file as named */
    static const char *const names[] = {"libdcgm.so.4", "libdcgm.so.3"};
    char why[512];
    if (path && path[0]) {
        d->dl = libpath_open_file(path, why, sizeof(why));
    } else {
        for (size_t i = 0; i < 2 && !d->dl; i++)
            d->dl = libpath_open(names[i], NULL, 0, why, sizeof(why));
    }
    if (!d->dl) {
        snprintf(detail, dlen, "%s", path && path[0] ? path : "libdcgm.so.4, libdcgm.so.3");
        return -1;
    }
    static const struct {
        const char *name;
        size_t off;
    } syms[] = {
#define S(n, m) {n, offsetof(struct dfns, m)}
        S("dcgmInit", init), S("dcgmShutdown", shutdown),
        S("dcgmStartEmbedded_v2", start_embedded), S("dcgmStopEmbedded", stop_embedded),
        S("dcgmConnect_v2", connect), S("dcgmDisconnect", disconnect),
        S("dcgmGetAllSupportedDevices", devices), S("dcgmGetGpuInstanceHierarchy", hierarchy),
        S("dcgmGroupCreate", group_create), S("dcgmGroupDestroy", group_destroy),
        S("dcgmGroupAddEntity", group_add), S("dcgmFieldGroupCreate", fg_create),
        S("dcgmFieldGroupDestroy", fg_destroy), S("dcgmWatchFields", watch),
        S("dcgmUnwatchFields", unwatch), S("dcgmUpdateAllFields", update_all),
        S("dcgmEntitiesGetLatestValues", latest),
        S("dcgmProfGetSupportedMetricGroups", prof_groups),
#undef S
    };
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        void *p = dlsym(d->dl, syms[i].name);
        if (!p) {
            snprintf(detail, dlen, "the DCGM library lacks %s", syms[i].name);
            return -2;
        }
        memcpy((char *)&d->f + syms[i].off, &p, sizeof(p));
    }
    return 0;
}

/* ------------------------------------------------------------ connecting */

static int try_connect(struct dh *d, const char *where)
{
    dcgmConnectV2Params_v2 p;
    memset(&p, 0, sizeof(p));
    p.version = dcgmConnectV2Params_version2;
    p.timeoutMs = CONNECT_TIMEOUT_MS;
    const char *a = where;
    if (strncmp(where, "unix:", 5) == 0) {
        p.addressIsUnixSocket = 1;
        a = where + 5;
    }
    dcgmh_progress(DCGM_CALL_CONNECT);
    dcgmHandle_t h = 0;
    int rc = d->f.connect(a, &p, &h);
    if (rc == DCGM_ST_OK) {
        d->h = h;
        d->connected = true;
        d->embedded = false;
        snprintf(d->st.where, sizeof(d->st.where), "%s", where);
    }
    return rc;
}

/* A process that runs a DCGM engine of its own (and so may hold the
 * node's one profiling module): its name and PID, or 0. */
static int other_engine(char *name, size_t nlen)
{
    DIR *dir = opendir("/proc");
    if (!dir)
        return 0;
    int found = 0;
    struct dirent *de;
    while (!found && (de = readdir(dir)) != NULL) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 0 || pid == (long)getpid())
            continue;
        char path[64], comm[64] = "";
        snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        if (fgets(comm, sizeof(comm), f))
            comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
        if (strcmp(comm, "nv-hostengine") == 0 || strcmp(comm, "dcgm-exporter") == 0) {
            snprintf(name, nlen, "%s", comm);
            found = (int)pid;
        }
    }
    closedir(dir);
    return found;
}

/* Every GPU has GPM (Hopper or later), asked of the NVML library in this
 * process (a hang here is the helper's, which the watchdog ends): then an
 * embedded engine would only duplicate GPM's sampling. False when unsure. */
static bool gpm_everywhere(const char *nvml_path)
{
    if (!nvml_path || !nvml_path[0])
        return false;
    struct nvml_lib lib;
    bool missing = false;
    char err[256];
    dcgmh_progress(DCGM_CALL_EMBEDDED);
    if (nvml_lib_open(&lib, nvml_path, &missing, err, sizeof(err)) != 0)
        return false;
    const struct nvml_fns *f = &lib.f;
    bool all = false;
    nvmlReturn_t rc = f->init_with_flags ? f->init_with_flags(NVML_INIT_FLAG_NO_GPUS) : f->init();
    unsigned n = 0;
    if (rc == NVML_SUCCESS && f->arch && f->device_count(&n) == NVML_SUCCESS && n > 0) {
        all = true;
        for (unsigned i = 0; all && i < n; i++) {
            nvmlDevice_t h;
            unsigned arch = 0;
            all = f->handle_by_index(i, &h) == NVML_SUCCESS && f->arch(h, &arch) == NVML_SUCCESS &&
                  arch >= NVML_DEVICE_ARCH_HOPPER && arch != NVML_DEVICE_ARCH_UNKNOWN;
        }
    }
    if (rc == NVML_SUCCESS)
        f->shutdown();
    nvml_lib_close(&lib);
    return all;
}

static int start_embedded(struct dh *d)
{
    dcgmStartEmbeddedV2Params_v1 p;
    memset(&p, 0, sizeof(p));
    p.version = dcgmStartEmbeddedV2Params_version1;
    p.opMode = DCGM_OPERATION_MODE_AUTO;
    p.logFile = NULL; /* never /var/log/nv-hostengine.log */
    dcgmh_progress(DCGM_CALL_EMBEDDED);
    int rc = d->f.start_embedded(&p);
    if (rc == DCGM_ST_OK) {
        d->h = p.dcgmHandle;
        d->connected = true;
        d->embedded = true;
        snprintf(d->st.where, sizeof(d->st.where), "embedded");
    }
    return rc;
}

/* Connects as the mode says. 0 connected; 1 not now (state sent, retry
 * later); -1 never (state sent). */
int dcgmh_connect(struct dh *d)
{
    char detail[256];
    int rc = DCGM_ST_CONNECTION_NOT_VALID;
    if (d->mode == DCGM_MODE_EMBEDDED) {
        rc = start_embedded(d);
        if (rc == DCGM_ST_OK)
            return 0;
        dcgmh_send_state(d, DCGM_STATE_FAILED, DCGM_CALL_EMBEDDED, rc, false, NULL);
        return -1;
    }
    if (d->mode == DCGM_MODE_ADDR) {
        rc = try_connect(d, d->addr);
        if (rc == DCGM_ST_OK)
            return 0;
        snprintf(d->st.where, sizeof(d->st.where), "%s", d->addr);
        dcgmh_send_state(d, DCGM_STATE_NO_ENGINE, DCGM_CALL_CONNECT, rc, true, NULL);
        return 1;
    }
    static const char *const where[] = {"unix:" DCGM_DEFAULT_SOCKET_PATH, "127.0.0.1:5555"};
    for (size_t i = 0; i < 2; i++) {
        rc = try_connect(d, where[i]);
        if (rc == DCGM_ST_OK)
            return 0;
    }
    snprintf(d->st.where, sizeof(d->st.where), "%s, %s", where[0], where[1]);
    /* asked once: the GPUs' architectures do not change */
    static int everywhere = -1;
    if (everywhere < 0)
        everywhere = gpm_everywhere(d->nvml);
    if (everywhere) {
        dcgmh_send_state(d, DCGM_STATE_NO_ENGINE, DCGM_CALL_CONNECT, rc, true, "GPM everywhere");
        return 1;
    }
    if (geteuid() != 0) {
        dcgmh_send_state(d, DCGM_STATE_NO_ENGINE, DCGM_CALL_CONNECT, rc, true, "not root");
        return 1;
    }
    char name[64];
    int pid = other_engine(name, sizeof(name));
    if (pid > 0) {
        snprintf(detail, sizeof(detail), "%s (pid %d) may hold the profiling module", name, pid);
        dcgmh_send_state(d, DCGM_STATE_NO_ENGINE, DCGM_CALL_CONNECT, rc, true, detail);
        return 1;
    }
    rc = start_embedded(d);
    if (rc == DCGM_ST_OK)
        return 0;
    dcgmh_send_state(d, DCGM_STATE_FAILED, DCGM_CALL_EMBEDDED, rc, false, NULL);
    return -1;
}

/* The watch, the field group and the group, as far as they were made. */
void dcgmh_unwatch(struct dh *d)
{
    if (d->watching)
        d->f.unwatch(d->h, d->grp, d->fg);
    if (d->have_fg)
        d->f.fg_destroy(d->h, d->fg);
    if (d->have_grp)
        d->f.group_destroy(d->h, d->grp);
    d->watching = d->have_fg = d->have_grp = false;
}

void dcgmh_disconnect(struct dh *d)
{
    if (!d->connected)
        return;
    dcgmh_unwatch(d);
    if (d->embedded)
        d->f.stop_embedded(d->h);
    else
        d->f.disconnect(d->h);
    d->connected = false;
}

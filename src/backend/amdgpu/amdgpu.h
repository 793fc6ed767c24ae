/*
 * amdgpu.h — the amdgpu backend's private header (shared one way by
 * amdgpu*.c): what discovery found, and the readers the files share.
 *
 * The backend reads the kernel's interfaces only: sysfs under --sysfs-root
 * (default /sys), hwmon, the binary gpu_metrics table, KFD topology, and
 * /proc/PID/fdinfo under --proc-root. No vendor library, no subprocess.
 */
#ifndef MIGMON_AMDGPU_H
#define MIGMON_AMDGPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/amdgpu/amdgpu_metrics.h"
#include "core/snapshot.h"

#define AMD_MAX_GPUS 64
#define AMD_PATH_LEN 512
/* a read's reason: a path (AMD_PATH_LEN + 128 at most) and what befell it */
#define AMD_WHY_LEN (AMD_PATH_LEN + 256)

struct amd_part {
    int xcp;               /* partition index on its GPU (0: the PCI device's node) */
    int render_minor;      /* its renderD minor, -1 unknown */
    char kfd_node[AMD_PATH_LEN]; /* the KFD topology node directory */
    struct metric vram_total;    /* KFD mem_banks/0 size_in_bytes */
    char vram_why[AMD_WHY_LEN];  /* why it could not be read, "" else */
};

struct amd_gpu {
    struct amd_io *io;        /* reads this GPU's files (owned; NULL: none could start) */
    char dev[AMD_PATH_LEN];   /* the PCI device directory (resolved) */
    char bus_id[32];          /* 0000:0c:00.0 */
    char name[MIGMON_NAME_LEN];
    char uuid[MIGMON_UUID_LEN];
    char serial[32];
    char arch[16];
    char hwmon[AMD_PATH_LEN]; /* "" when there is none */
    char compute_mode[16];    /* current_compute_partition, "" when absent */
    char memory_mode[16];     /* current_memory_partition */
    /* available_compute_partition / available_memory_partition as read
     * ("SPX, DPX, QPX, CPX"; "" for "Not supported"); *_why: why a read
     * failed, "" when read */
    char compute_avail[64], memory_avail[64];
    char compute_avail_why[AMD_WHY_LEN], memory_avail_why[AMD_WHY_LEN]; /* "" when read */
    struct amd_residency res_prev; /* the last read's, for the reasons' deltas */
    int render_minor;
    int nparts;               /* partitions with their own node; 0: not partitioned */
    struct amd_part parts[AMD_NUM_XCP];
};

/* Per-process engine counters kept between scans (GPU % is a delta). */
struct amd_client {
    uint32_t pid;
    uint64_t client_id;
    uint64_t engine_ns;
    uint64_t seen_ns; /* CLOCK_MONOTONIC of the read */
    unsigned gen;     /* scan that last saw it */
};

#define AMD_MAX_CLIENTS 1024
/* fdinfo files read per scan at most: the scan stays bounded on a host
 * with many processes (the rest of the processes are not listed, and the
 * process count says so). */
#define AMD_MAX_FDS 8192

struct amd_state {
    char sysfs[AMD_PATH_LEN]; /* --sysfs-root or /sys */
    char proc[AMD_PATH_LEN];  /* --proc-root or /proc */
    int ngpus;
    struct amd_gpu gpus[AMD_MAX_GPUS];
    struct amd_client clients[AMD_MAX_CLIENTS];
    size_t nclients;
    unsigned gen;
    bool fds_capped; /* the last scan stopped at AMD_MAX_FDS */
    bool no_procs;   /* no front end shows processes: fdinfo is not scanned */
    char err[512];
};

/* amdgpu_io.c: reads that neither block on what is not a regular file nor
 * outlast the tick's deadline on a hung GPU (a thread per GPU reads; the
 * sampling thread waits until the deadline). */
struct amd_io;
/* The reader of one GPU's files; NULL when no thread could be made. */
struct amd_io *amd_io_open(void);
/* Accepts NULL. A reader stuck in a read is left to free itself when the
 * read returns; the call never waits for it. */
void amd_io_close(struct amd_io *io);
/* The deadline (CLOCK_MONOTONIC) of io's reads from now on. */
void amd_io_set_deadline(struct amd_io *io, uint64_t deadline_ns);
/* True while a read of io has not come back, why then "stalled N s
 * reading PATH". */
bool amd_io_stalled(struct amd_io *io, char *why, size_t whylen);
enum { AMD_READ_OK = 0, AMD_READ_ERR = -1, AMD_READ_STALLED = -2 };
/* One read() of path, a regular file opened O_NONBLOCK, into out (len
 * bytes at most; *got the bytes read), by io's thread within its deadline
 * (io NULL: on the calling thread, unbounded in time: for /proc). On
 * failure why holds the reason with the path: "PATH: No such file or
 * directory", "PATH: not a regular file (a FIFO; ...)" (ERR, errno set:
 * EINVAL for a file not regular), or (STALLED) "stalled N s reading
 * PATH2", PATH2 being the read that has not come back. */
int amd_io_read(struct amd_io *io, const char *path, void *out, size_t len, size_t *got,
                char *why, size_t whylen);
/* The same for a text: NUL-terminated, its trailing newline and spaces
 * cut ("" on failure). */
int amd_read_text(struct amd_io *io, const char *path, char *out, size_t len, char *why,
                  size_t whylen);

/* amdgpu_sysfs.c: snprintf that cuts silently (paths are bounded by
 * AMD_PATH_LEN; a longer one fails to open and is reported as such). */
void amd_fmt(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A number as sysfs and hwmon print it ("%llu\n", "%d\n"), strictly:
 * decimal digits (after a minus sign for the signed one), then nothing but
 * the newline or spaces the kernel ends it with. strtoull would take "-5"
 * for 2^64 - 5 and "12abc" for 12. 0, or -1 with *why (static: "is
 * negative (only 0 and up)", "is not a number", "is empty", "is out of
 * range (...)"). */
int amd_parse_u64(const char *text, uint64_t *v, const char **why);
int amd_parse_i64(const char *text, int64_t *v, const char **why);
/* <dir>/<name> into metric id, scaled by scale: parsed signed where id's
 * range goes below 0 (hwmon temperatures), else unsigned; none naming the
 * path when the file is missing, not a number or outside id's range. */
struct metric amd_file_metric(struct snapshot *s, struct amd_io *io, const char *dir,
                              const char *name, double scale, enum metric_id id);
/* The GPU's own metrics (sysfs, hwmon, gpu_metrics) into d; the decoded
 * table into gm (for the partitions). */
void amd_sample_gpu(struct snapshot *s, struct amd_gpu *g, struct device *d,
                    struct amd_gpu_metrics *gm);

/* amdgpu_discover.c: every amdgpu PCI device under st->sysfs, with its
 * partitions. Returns the number found. */
int amd_discover(struct amd_state *st);

/* amdgpu_fdinfo.c: processes of every GPU and partition from fdinfo, into
 * s after the devices [first, s->ndevices) (which they are attributed
 * to), at now_ns (CLOCK_MONOTONIC). */
void amd_scan_processes(struct amd_state *st, struct snapshot *s, size_t first, uint64_t now_ns);
/* One fdinfo text: 0 and its values when it is an amdgpu client. */
struct amd_fdinfo {
    char pdev[32];
    uint64_t client_id;
    uint64_t vram_bytes;
    bool has_vram;
    uint64_t engine_ns; /* gfx + compute */
    bool has_gfx, has_compute;
    bool engine_bad; /* a drm-engine-* that is not "<n> ns": engine_ns is no sum */
};
int amd_fdinfo_parse(const char *text, struct amd_fdinfo *f);

#endif

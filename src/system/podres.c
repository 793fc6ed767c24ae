/*
 * podres.c — the kubelet's pod-resources List, asked in the background and
 * kept (podres.h); the call itself is podres_call.c.
 *
 * Threads: podres_thread alone calls and writes the log stream; pr->mu
 * guards pr->cur and pr->logs (and the reference counts of every list)
 * and the state read by podres_health.
 */
#include "system/podres.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/text.h"
#include "system/podres_call.h"

static int ms_left(uint64_t deadline)
{
    uint64_t now = clock_mono_ns();
    return now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
}

/* ---- the cache and its thread ------------------------------------------------ */

struct podres {
    char socket[PATH_MAX];   /* "": the kubelet is not asked */
    char logs_dir[PATH_MAX]; /* "": no log directories read */
    unsigned refresh_ms, deadline_ms;
    FILE *log;
    bool quiet_absent;
    int stop[2]; /* podres_stop writes; the thread polls */
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    /* mu: */
    struct podres_list *cur; /* the last answer, NULL before the first */
    enum call_kind kind;     /* of the last call; CK_STOPPED: none made yet */
    char why[400];           /* the last call's failure */
    uint64_t failing_ns;     /* when the calls began to fail (CLOCK_MONOTONIC), 0 */
    struct podres_list *logs; /* the log directories' pods, NULL: none read */
    int logs_err;            /* why they could not be read (-errno), 0 */
};

static uint64_t keep_ns(const struct podres *pr)
{
    return (uint64_t)pr->refresh_ms * PODRES_KEEP_REFRESHES * 1000000ull;
}

static void list_unref(struct podres_list *l)
{
    /* with pr->mu held */
    if (l && --l->refs == 0)
        podres_list_free(l);
}

/* The log directories' pods, read again. */
static void refresh_logs(struct podres *pr)
{
    struct podres_list *l = NULL;
    int rc = podres_scan_logs(pr->logs_dir, &l);
    if (l)
        l->refs = 1;
    pthread_mutex_lock(&pr->mu);
    list_unref(pr->logs);
    pr->logs = l;
    pr->logs_err = rc;
    pthread_mutex_unlock(&pr->mu);
}

/* One refresh: ask, keep a good answer, and say what changed. */
static void refresh(struct podres *pr)
{
    char why[400] = "";
    struct podres_list *l = NULL;
    enum call_kind kind;
    struct stat st;
    if (stat(pr->socket, &st) != 0) {
        snprintf(why, sizeof(why), "no socket there (%s)", strerror(errno));
        kind = CK_NO_SOCKET;
    } else if (!S_ISSOCK(st.st_mode)) {
        snprintf(why, sizeof(why), "not a socket");
        kind = CK_NO_SOCKET;
    } else {
        kind = podres_call_kind(pr->socket, pr->deadline_ms, pr->stop[0], &l, why, sizeof(why));
    }
    if (kind == CK_STOPPED)
        return;
    text_clean(why, sizeof(why)); /* it may quote the kubelet */
    pthread_mutex_lock(&pr->mu);
    enum call_kind before = pr->kind;
    /* the kind, not the text: a kubelet that fails one way now with our
     * deadline, now with its own, is said once */
    bool same = kind == before;
    uint64_t now = clock_mono_ns();
    if (kind == CK_OK) {
        l->refs = 1;
        list_unref(pr->cur);
        pr->cur = l;
        pr->failing_ns = 0;
        pr->why[0] = '\0';
    } else {
        if (!pr->failing_ns)
            pr->failing_ns = now;
        snprintf(pr->why, sizeof(pr->why), "%s", why);
    }
    pr->kind = kind;
    bool kept = kind != CK_OK && pr->cur && now - pr->cur->listed_ns <= keep_ns(pr);
    size_t npods = l ? l->npods : 0, ndev = l ? l->n : 0;
    pthread_mutex_unlock(&pr->mu);
    if (!pr->log || same)
        return;
    if (pr->quiet_absent && kind == CK_NO_SOCKET && before == CK_STOPPED)
        return; /* not a Kubernetes node */
    /* Said when the kind of failure changes, not at each refresh. */
    double every = pr->refresh_ms / 1000.0;
    if (kind == CK_OK)
        fprintf(pr->log,
                "mig-gpu-mon: kubelet: pod labels from %s (%zu pods, %zu device ids%s), asked "
                "every %g s\n",
                pr->socket, npods, ndev, before == CK_STOPPED ? "" : "; it answers again",
                every);
    else if (kept)
        fprintf(pr->log,
                "mig-gpu-mon: kubelet: %s: %s; the pod labels of its last answer are kept for "
                "at most %g s\n",
                pr->socket, why, every * PODRES_KEEP_REFRESHES);
    else
        fprintf(pr->log, "mig-gpu-mon: kubelet: %s: %s; no pod labels until it answers%s\n",
                pr->socket, why,
                kind == CK_NO_SOCKET ? " (--kubelet-socket off: not asked)" : "");
    fflush(pr->log);
}

static void *podres_thread(void *arg)
{
    struct podres *pr = arg;
    for (;;) {
        uint64_t t0 = clock_mono_ns();
        if (pr->socket[0])
            refresh(pr);
        if (pr->logs_dir[0])
            refresh_logs(pr);
        uint64_t next = t0 + (uint64_t)pr->refresh_ms * 1000000ull;
        for (;;) {
            struct pollfd p = {.fd = pr->stop[0], .events = POLLIN};
            int n = poll(&p, 1, ms_left(next));
            if (n > 0)
                return NULL;
            if (n == 0 || ms_left(next) == 0)
                break;
        }
    }
}

int podres_start(struct podres **out, const struct podres_opts *o, char *err, size_t errlen)
{
    *out = NULL;
    struct podres *pr = calloc(1, sizeof(*pr));
    if (!pr) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if ((o->socket && strlen(o->socket) >= sizeof(pr->socket)) ||
        (o->logs_dir && strlen(o->logs_dir) >= sizeof(pr->logs_dir))) {
        snprintf(err, errlen, "the kubelet's socket or log directory: a path too long");
        free(pr);
        return -1;
    }
    snprintf(pr->socket, sizeof(pr->socket), "%s", o->socket ? o->socket : "");
    snprintf(pr->logs_dir, sizeof(pr->logs_dir), "%s", o->logs_dir ? o->logs_dir : "");
    pr->refresh_ms = o->refresh_ms ? o->refresh_ms : PODRES_REFRESH_DEFAULT_MS;
    pr->deadline_ms = o->deadline_ms ? o->deadline_ms : PODRES_DEADLINE_DEFAULT_MS;
    /* a call never outlasts a refresh period */
    if (pr->deadline_ms > pr->refresh_ms)
        pr->deadline_ms = pr->refresh_ms;
    pr->log = o->log;
    pr->quiet_absent = o->quiet_absent;
    pr->kind = CK_STOPPED;
    if (pipe2(pr->stop, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        free(pr);
        return -1;
    }
    pthread_mutex_init(&pr->mu, NULL);
    /* The thread gets none of the signals the front end handles. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&pr->thread, NULL, podres_thread, pr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the kubelet thread: %s", strerror(rc));
        pthread_mutex_destroy(&pr->mu);
        close(pr->stop[0]);
        close(pr->stop[1]);
        free(pr);
        return -1;
    }
    pr->started = true;
    *out = pr;
    return 0;
}

void podres_stop(struct podres *pr)
{
    if (!pr)
        return;
    char b = 1;
    ssize_t n = write(pr->stop[1], &b, 1); /* an empty pipe of ours: cannot fail */
    (void)n;
    if (pr->started)
        pthread_join(pr->thread, NULL);
    /* Lists still acquired are the holders' to release; none may be by now
     * (the exporter stops rendering first). */
    pthread_mutex_lock(&pr->mu);
    list_unref(pr->cur);
    list_unref(pr->logs);
    pr->cur = pr->logs = NULL;
    pthread_mutex_unlock(&pr->mu);
    pthread_mutex_destroy(&pr->mu);
    close(pr->stop[0]);
    close(pr->stop[1]);
    free(pr);
}

const struct podres_list *podres_acquire(struct podres *pr)
{
    if (!pr)
        return NULL;
    pthread_mutex_lock(&pr->mu);
    struct podres_list *l = pr->cur;
    if (l && clock_mono_ns() - l->listed_ns > keep_ns(pr))
        l = NULL;
    if (l)
        l->refs++;
    pthread_mutex_unlock(&pr->mu);
    return l;
}

const struct podres_list *podres_acquire_logs(struct podres *pr)
{
    if (!pr)
        return NULL;
    pthread_mutex_lock(&pr->mu);
    struct podres_list *l = pr->logs;
    if (l)
        l->refs++;
    pthread_mutex_unlock(&pr->mu);
    return l;
}

void podres_release(struct podres *pr, const struct podres_list *l)
{
    if (!pr || !l)
        return;
    pthread_mutex_lock(&pr->mu);
    list_unref((struct podres_list *)l);
    pthread_mutex_unlock(&pr->mu);
}

void podres_health(struct podres *pr, char *out, size_t len)
{
    if (!pr) {
        if (len)
            out[0] = '\0';
        return;
    }
    if (len)
        out[0] = '\0';
    pthread_mutex_lock(&pr->mu);
    uint64_t now = clock_mono_ns();
    const struct podres_list *l = pr->cur;
    double age = l ? (double)(now - l->listed_ns) / 1e9 : 0;
    bool usable = l && now - l->listed_ns <= keep_ns(pr);
    if (!pr->socket[0])
        ; /* not asked */
    else if (pr->kind == CK_STOPPED)
        snprintf(out, len, "kubelet: %s: not asked yet", pr->socket);
    else if (pr->kind == CK_OK)
        snprintf(out, len, "kubelet: %s: %zu pods, %zu device ids, listed %.1f s ago",
                 pr->socket, l->npods, l->n, age);
    else if (usable)
        snprintf(out, len,
                 "kubelet: %s: %s (for %.0f s); pod labels from the answer of %.0f s ago, "
                 "dropped at %g s",
                 pr->socket, pr->why, (double)(now - pr->failing_ns) / 1e9, age,
                 pr->refresh_ms * PODRES_KEEP_REFRESHES / 1000.0);
    else
        snprintf(out, len, "kubelet: %s: %s (for %.0f s); no pod labels", pr->socket, pr->why,
                 (double)(now - pr->failing_ns) / 1e9);
    size_t n = strlen(out);
    if (pr->logs_dir[0] && n + 1 < len) {
        const char *sep = n ? "\n" : "";
        if (pr->logs)
            snprintf(out + n, len - n, "%skubelet: pod log directories %s: %zu pods", sep,
                     pr->logs_dir, pr->logs->n);
        else if (pr->logs_err)
            snprintf(out + n, len - n, "%skubelet: pod log directories %s: %s", sep,
                     pr->logs_dir, strerror(-pr->logs_err));
        else
            snprintf(out + n, len - n, "%skubelet: pod log directories %s: not read yet", sep,
                     pr->logs_dir);
    }
    pthread_mutex_unlock(&pr->mu);
}

/* ---- which device an id names ------------------------------------------------ */

bool podres_names(const char *id, const struct device *d)
{
    char buf[MIGMON_UUID_LEN + 32];
    const char *sep = strstr(id, "::");
    size_t n = sep ? (size_t)(sep - id) : strlen(id);
    if (n == 0 || n >= sizeof(buf))
        return false;
    memcpy(buf, id, n);
    buf[n] = '\0';
    if (strncmp(buf, "MIG-GPU-", 8) == 0) {
        /* MIG-GPU-<uuid>/<gi>/<ci>: drivers before R470 */
        char *slash = strchr(buf, '/');
        unsigned gi, ci;
        char tail;
        if (d->kind != DEV_MIG || !slash ||
            sscanf(slash, "/%u/%u%c", &gi, &ci, &tail) != 2)
            return false;
        *slash = '\0';
        return d->parent_uuid[0] && strcasecmp(buf + 4, d->parent_uuid) == 0 &&
               d->gi_id == (int)gi && d->ci_id == (int)ci;
    }
    if (strncmp(buf, "MIG-", 4) == 0)
        return d->kind == DEV_MIG && d->uuid[0] && strcasecmp(buf, d->uuid) == 0;
    if (strncmp(buf, "GPU-", 4) == 0)
        return d->kind == DEV_GPU && d->uuid[0] && strcasecmp(buf, d->uuid) == 0;
    return false;
}

const struct podres_dev *podres_holder(const struct podres_list *l, const struct device *d,
                                       bool *shared)
{
    *shared = false;
    if (!l)
        return NULL;
    const struct podres_dev *h = NULL;
    for (size_t i = 0; i < l->n; i++) {
        const struct podres_dev *e = &l->dev[i];
        if (!podres_names(e->id, d))
            continue;
        if (!h) {
            h = e;
        } else if (strcmp(h->pod, e->pod) != 0 || strcmp(h->ns, e->ns) != 0 ||
                   strcmp(h->container, e->container) != 0) {
            *shared = true;
            return NULL;
        }
    }
    return h;
}

/*
 * serve.c — the HTTP side of `mig-gpu-mon export` (serve.h).
 *
 * Threads and ownership:
 * - The front end thread (serve_run's loop, or whoever calls
 *   serve_publish) owns srv->buf and renders into it.
 * - The HTTP thread (http_main) runs libmicrohttpd's event loop (epoll,
 *   driven by us rather than by a thread of the library's, so that the
 *   deadlines below are kept by the same thread): every MHD callback
 *   (on_connection, on_request, on_completed) runs on it, and it alone
 *   owns srv->lim and every struct conn. serve_start creates the daemon
 *   before the thread starts and serve_stop stops it after the join.
 * - srv->mu guards srv->cur, srv->published_ns, srv->events and the refs
 *   of every page.
 *   A page is immutable once published; it is freed by whoever drops its
 *   last reference: the publisher replacing it, or a finished response
 *   (page_unref, MHD's free callback).
 *
 * Bounds (connlimit.h, docs/prometheus.md): each request, from the accept
 * or from the answer before it, must be in and answered within timeout_s;
 * a client address holds at most conn_per_client connections and all at
 * most conn_limit; a new connection over a bound gets in and an older one
 * is closed (the oldest idle or unfinished first), so held connections
 * cannot keep a scraper out. Closing is a shutdown() of MHD's socket from
 * the HTTP thread: MHD sees the hang-up on its next turn and closes and
 * frees the connection itself (the fd stays MHD's until its CLOSED
 * notification, so it cannot be reused under us). At most
 * conn_memory bytes of request per connection (a larger request line or
 * headers get 431). Anything but GET or HEAD of /metrics or /health gets
 * 404 (unknown path) or 405.
 *
 * libmicrohttpd is opened when a server starts, not linked (mhd_load.c
 * says why); the listening socket is made by serve_listen.c.
 */
#include "serve/serve.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>
#include <zlib.h>

#include "core/clock.h"
#include "engine/engine.h"
#include "export/xid_counts.h"
#include "serve/connlimit.h"
#include "serve/mhd_load.h"
#include "serve/serve_listen.h"
#include "system/podres.h"

#define DEFAULT_CONN_LIMIT 512u
#define DEFAULT_CONN_PER_CLIENT 64u
#define DEFAULT_TIMEOUT_S 10u
#define DEFAULT_CONN_MEMORY 16384u
/* Connections MHD may hold beyond conn_limit: one chosen to be closed is
 * shut down at once but leaves MHD's count on its next turn, and MHD
 * stops accepting while at its own limit, which is what must not happen. */
#define CONN_SLACK 64u
/* Descriptors the process needs besides the connections: NVML and the
 * simulator, the GPM helper's pipes, /proc, the log, epoll, the pipes
 * here. */
#define FD_RESERVE 64u

struct page {
    unsigned refs; /* srv->mu */
    char *text;
    size_t len;
    char *gz; /* NULL when compression failed: served uncompressed */
    size_t gzlen;
};

/* One TCP connection, from MHD's STARTED notification to its CLOSED one;
 * the HTTP thread's. */
struct conn {
    struct connlimit_conn lim; /* first: connlimit hands back its address */
    int fd;                    /* MHD's socket: shut down to close, never closed here */
};

struct server {
    struct MHD_Daemon *d;
    int epoll_fd;            /* MHD's, polled by the HTTP thread */
    int stop[2];             /* a pipe: serve_stop writes, the HTTP thread polls */
    pthread_t thread;        /* http_main */
    bool thread_started;
    struct connlimit lim;    /* the HTTP thread's */
    char note[200];          /* serve_start: the bounds lowered to fit RLIMIT_NOFILE */
    int port;
    char where[160];         /* "http://127.0.0.1:9400" for the log line */
    uint64_t stale_ns;       /* /health: a page older than this is KO */
    struct prom_opts popts;
    struct prom_buf buf;     /* the publisher's */
    struct podres *pods;     /* the kubelet's device holders; NULL: no pod labels */
    pthread_mutex_t mu;
    struct page *cur;        /* mu */
    uint64_t published_ns;   /* mu: CLOCK_MONOTONIC of the last publish */
    char events[480];        /* mu: the page's Xid watch (xid_watch_text) */
};

static void page_free(struct page *p)
{
    if (!p)
        return;
    free(p->text);
    free(p->gz);
    free(p);
}

/* MHD's free callback of a /metrics response: drops its reference. */
static void page_unref(void *cls)
{
    struct page *p = cls;
    struct server *srv = *(struct server **)(p + 1);
    pthread_mutex_lock(&srv->mu);
    bool last = --p->refs == 0;
    pthread_mutex_unlock(&srv->mu);
    if (last)
        page_free(p);
}

/* gzip of text (level 1: the page is repetitive, so level 1 gets most of
 * the saving at a fraction of the CPU of the default). */
static int gzip_page(struct page *p)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    size_t cap = deflateBound(&z, (uLong)p->len) + 32;
    p->gz = malloc(cap);
    if (!p->gz) {
        deflateEnd(&z);
        return -1;
    }
    z.next_in = (Bytef *)p->text;
    z.avail_in = (uInt)p->len;
    z.next_out = (Bytef *)p->gz;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    p->gzlen = z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(p->gz);
        p->gz = NULL;
        return -1;
    }
    return 0;
}

int serve_publish(struct server *srv, const struct snapshot *s)
{
    const struct podres_list *pods = podres_acquire(srv->pods);
    const struct podres_list *logs = podres_acquire_logs(srv->pods);
    srv->popts.pods = pods;
    srv->popts.pod_logs = logs;
    int rrc = prom_render(&srv->buf, s, &srv->popts);
    srv->popts.pods = srv->popts.pod_logs = NULL;
    podres_release(srv->pods, pods);
    podres_release(srv->pods, logs);
    if (rrc != 0)
        return -ENOMEM;
    /* The page and, after it, the server it belongs to (for page_unref). */
    struct page *p = calloc(1, sizeof(*p) + sizeof(struct server *));
    if (!p)
        return -ENOMEM;
    *(struct server **)(p + 1) = srv;
    p->text = malloc(srv->buf.len + 1);
    if (!p->text) {
        free(p);
        return -ENOMEM;
    }
    memcpy(p->text, srv->buf.p, srv->buf.len + 1);
    p->len = srv->buf.len;
    gzip_page(p);
    p->refs = 1; /* the server's */
    char events[sizeof(srv->events)];
    xid_watch_text(s, events, sizeof(events));
    pthread_mutex_lock(&srv->mu);
    struct page *old = srv->cur;
    srv->cur = p;
    srv->published_ns = clock_mono_ns();
    memcpy(srv->events, events, sizeof(events));
    bool last = old && --old->refs == 0;
    pthread_mutex_unlock(&srv->mu);
    if (last)
        page_free(old);
    return 0;
}

/* Does an Accept-Encoding value accept gzip? "gzip", "x-gzip" or "*",
 * unless with q=0. */
static bool accepts_gzip(const char *ae)
{
    bool star = false;
    while (ae && *ae) {
        while (*ae == ' ' || *ae == '\t' || *ae == ',')
            ae++;
        const char *end = strchr(ae, ',');
        size_t n = end ? (size_t)(end - ae) : strlen(ae);
        const char *semi = memchr(ae, ';', n);
        size_t nl = semi ? (size_t)(semi - ae) : n;
        while (nl && (ae[nl - 1] == ' ' || ae[nl - 1] == '\t'))
            nl--;
        double q = 1;
        if (semi) {
            const char *qs = semi + 1;
            while (*qs == ' ')
                qs++;
            if ((qs[0] == 'q' || qs[0] == 'Q') && qs[1] == '=')
                q = strtod(qs + 2, NULL);
        }
        if ((nl == 4 && strncasecmp(ae, "gzip", 4) == 0) ||
            (nl == 6 && strncasecmp(ae, "x-gzip", 6) == 0))
            return q > 0;
        if (nl == 1 && ae[0] == '*')
            star = q > 0;
        if (!end)
            break;
        ae = end + 1;
    }
    return star;
}

/* The struct conn of an MHD connection (NULL when on_connection could
 * not make one). */
static struct conn *conn_of(struct MHD_Connection *mc)
{
    const union MHD_ConnectionInfo *ci =
        mhd.get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static void conn_close(struct connlimit_conn *l)
{
    shutdown(((struct conn *)l)->fd, SHUT_RDWR);
}

/* connlimit's has_request: bytes wait on the socket (a request that came
 * while the HTTP thread was answering others), read by MHD's next turn. */
static bool conn_has_request(struct connlimit_conn *l)
{
    char b;
    return recv(((struct conn *)l)->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
}

/* Queue r, closing the connection after it when its bounds are crowded
 * (connlimit_crowded). */
static enum MHD_Result queue_reply(struct server *srv, struct MHD_Connection *conn,
                                   unsigned status, struct MHD_Response *r)
{
    struct conn *c = conn_of(conn);
    if (c && connlimit_crowded(&srv->lim, &c->lim))
        mhd.add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result rc = mhd.queue_response(conn, status, r);
    mhd.destroy_response(r);
    return rc;
}

static enum MHD_Result reply_text(struct server *srv, struct MHD_Connection *conn,
                                  unsigned status, const char *body, const char *allow)
{
    struct MHD_Response *r =
        mhd.create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    if (allow)
        mhd.add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    return queue_reply(srv, conn, status, r);
}

static enum MHD_Result reply_metrics(struct server *srv, struct MHD_Connection *conn)
{
    pthread_mutex_lock(&srv->mu);
    struct page *p = srv->cur;
    if (p)
        p->refs++;
    pthread_mutex_unlock(&srv->mu);
    if (!p)
        return reply_text(srv, conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no sample yet\n", NULL);
    bool gz = p->gz &&
              accepts_gzip(mhd.lookup_connection_value(conn, MHD_HEADER_KIND,
                                                       MHD_HTTP_HEADER_ACCEPT_ENCODING));
    struct MHD_Response *r = mhd.create_response_cls(
        gz ? p->gzlen : p->len, gz ? p->gz : p->text, page_unref, p);
    if (!r) {
        page_unref(p);
        return MHD_NO;
    }
    mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, PROM_CONTENT_TYPE);
    mhd.add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
    if (gz)
        mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
    return queue_reply(srv, conn, MHD_HTTP_OK, r); /* the page is released when it is sent */
}

static enum MHD_Result reply_health(struct server *srv, struct MHD_Connection *conn)
{
    char events[sizeof(srv->events)];
    pthread_mutex_lock(&srv->mu);
    bool have = srv->cur != NULL;
    uint64_t at = srv->published_ns;
    memcpy(events, srv->events, sizeof(events));
    pthread_mutex_unlock(&srv->mu);
    /* The kubelet's state and the Xid events' are said, never judged:
     * without pod labels or Xid series the exporter still serves every
     * other series. */
    char pods[600] = "", body[1200];
    podres_health(srv->pods, pods, sizeof(pods));
    unsigned status = MHD_HTTP_OK;
    const char *verdict = "OK";
    if (!have) {
        status = MHD_HTTP_SERVICE_UNAVAILABLE;
        verdict = "KO: no sample yet";
    } else if (clock_mono_ns() - at > srv->stale_ns) {
        status = MHD_HTTP_SERVICE_UNAVAILABLE;
        verdict = "KO: the sampling thread has published nothing lately";
    }
    snprintf(body, sizeof(body), "%s\n%s%s%s%s", verdict, pods, pods[0] ? "\n" : "", events,
             events[0] ? "\n" : "");
    return reply_text(srv, conn, status, body, NULL);
}

/* MHD's STARTED and CLOSED notifications: a connection is listed from its
 * accept to its close. */
static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct server *srv = cls;
    struct conn *c = *socket_context;
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (c) {
            connlimit_remove(&srv->lim, &c->lim);
            free(c);
            *socket_context = NULL;
        }
        return;
    }
    const union MHD_ConnectionInfo *fdi =
        mhd.get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ai =
        mhd.get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!fdi)
        return; /* not with a socket of its own: MHD's bounds alone */
    c = calloc(1, sizeof(*c));
    struct connlimit_conn *victim = NULL;
    if (!c || connlimit_add(&srv->lim, &c->lim, ai ? ai->client_addr : NULL, clock_mono_ns(),
                            &victim) != 0) {
        free(c);
        shutdown(fdi->connect_fd, SHUT_RDWR); /* out of memory: not taken */
        return;
    }
    c->fd = fdi->connect_fd;
    *socket_context = c;
    if (victim)
        conn_close(victim);
}

/* A request is done: a kept-alive connection waits for the next one, with
 * a new deadline. */
static void on_completed(void *cls, struct MHD_Connection *mc, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)req_cls;
    struct server *srv = cls;
    struct conn *c = conn_of(mc);
    if (c && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
        connlimit_answered(&srv->lim, &c->lim, clock_mono_ns());
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **req_cls)
{
    (void)version;
    (void)upload_data;
    struct server *srv = cls;
    struct conn *c = conn_of(conn);
    if (c)
        connlimit_answering(&c->lim);
    bool metrics = strcmp(url, "/metrics") == 0, health = strcmp(url, "/health") == 0;
    if (!metrics && !health)
        return reply_text(srv, conn, MHD_HTTP_NOT_FOUND, "not found: try /metrics or /health\n",
                          NULL);
    /* Answered on the first call, before any body is read: a body (a
     * POST's) is never buffered; the connection is closed after it. */
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return reply_text(srv, conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n",
                          "GET, HEAD");
    /* A GET is answered once the whole request is in (the second call),
     * so the connection can be kept alive for the next scrape. */
    static int seen;
    if (*req_cls != &seen) {
        *req_cls = &seen;
        return MHD_YES;
    }
    if (*upload_data_size != 0) { /* a GET with a body: ignored */
        *upload_data_size = 0;
        return MHD_YES;
    }
    return metrics ? reply_metrics(srv, conn) : reply_health(srv, conn);
}

/* The HTTP thread: MHD's event loop, and the deadlines. Signals are
 * blocked (serve_start). Ends when serve_stop writes to srv->stop. */
static void *http_main(void *arg)
{
    struct server *srv = arg;
    for (;;) {
        int wait_ms = -1;
        MHD_UNSIGNED_LONG_LONG t;
        if (mhd.get_timeout(srv->d, &t) == MHD_YES)
            wait_ms = t < INT_MAX ? (int)t : INT_MAX;
        uint64_t next = connlimit_next_deadline(&srv->lim);
        if (next) {
            uint64_t now = clock_mono_ns();
            uint64_t ms = next > now ? (next - now + 999999) / 1000000 : 0;
            if (wait_ms < 0 || ms < (uint64_t)wait_ms)
                wait_ms = (int)ms;
        }
        struct pollfd p[2] = {{.fd = srv->epoll_fd, .events = POLLIN},
                              {.fd = srv->stop[0], .events = POLLIN}};
        if (poll(p, 2, wait_ms) < 0 && errno != EINTR)
            poll(NULL, 0, 10); /* not expected (ENOMEM): no busy loop */
        if (p[1].revents)
            break;
        mhd.run(srv->d);
        uint64_t now = clock_mono_ns();
        struct connlimit_conn *x;
        while ((x = connlimit_expired(&srv->lim, now)))
            conn_close(x);
    }
    return NULL;
}

/* Room for every connection MHD may hold: the soft RLIMIT_NOFILE is raised
 * as far as needed (up to the hard one; prlimit, because the shipped
 * unit's system-call filter denies setrlimit but allows prlimit64); where
 * the hard limit is lower, *cap is lowered to fit and why goes to note. */
static void fit_fd_limit(unsigned *cap, char *note, size_t notelen)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    rlim_t need = (rlim_t)*cap + CONN_SLACK + FD_RESERVE;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        struct rlimit up = rl;
        up.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
        if (prlimit(0, RLIMIT_NOFILE, &up, NULL) == 0)
            rl.rlim_cur = up.rlim_cur;
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
        return;
    unsigned fit = rl.rlim_cur > CONN_SLACK + FD_RESERVE + 16
                       ? (unsigned)(rl.rlim_cur - CONN_SLACK - FD_RESERVE)
                       : 16;
    snprintf(note, notelen,
             "the open-file limit (%llu) leaves room for %u connections at once, not %u",
             (unsigned long long)rl.rlim_cur, fit, *cap);
    *cap = fit;
}

int serve_start(struct server **out, const struct serve_opts *o, char *err, size_t errlen)
{
    *out = NULL;
    struct server *srv = calloc(1, sizeof(*srv));
    if (!srv) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (mhd_load(err, errlen) != 0) {
        free(srv);
        return -1;
    }
    srv->stop[0] = srv->stop[1] = -1;
    if (pipe2(srv->stop, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        free(srv);
        return -1;
    }
    pthread_mutex_init(&srv->mu, NULL);
    srv->popts = o->page;
    unsigned cap = o->conn_limit ? o->conn_limit : DEFAULT_CONN_LIMIT;
    unsigned timeout_s = o->timeout_s ? o->timeout_s : DEFAULT_TIMEOUT_S;
    fit_fd_limit(&cap, srv->note, sizeof(srv->note));
    unsigned per_client = o->conn_per_client ? o->conn_per_client : DEFAULT_CONN_PER_CLIENT;
    connlimit_init(&srv->lim, cap, per_client, (uint64_t)timeout_s * 1000000000ull);
    srv->lim.has_request = conn_has_request;
    uint64_t iv = (uint64_t)(o->interval_ms ? o->interval_ms : 1000) * 1000000ull;
    srv->stale_ns = 5 * iv > 10000000000ull ? 5 * iv : 10000000000ull;
    int fd = serve_listen(o->listen ? o->listen : ":9400", srv->where, sizeof(srv->where),
                          &srv->port, err, errlen);
    if (fd < 0)
        goto fail;
    /* MHD's own limit is above ours (CONN_SLACK): ours closes the oldest,
     * MHD's would stop accepting. Its idle timeout is a backstop only: a
     * request's deadline (connlimit) always comes first. The callbacks
     * go through varargs: typed here so that a wrong one does not build. */
    MHD_NotifyConnectionCallback notify_conn = on_connection;
    MHD_RequestCompletedCallback notify_done = on_completed;
    if (o->kubelet_socket || (o->pod_logs && o->page.processes)) {
        struct podres_opts po = {.socket = o->kubelet_socket,
                                 .logs_dir = o->page.processes ? o->pod_logs : NULL,
                                 .refresh_ms = o->kubelet_refresh_ms,
                                 .log = stderr,
                                 .quiet_absent = o->kubelet_socket &&
                                                 strcmp(o->kubelet_socket, PODRES_SOCKET_DEFAULT) == 0};
        if (podres_start(&srv->pods, &po, err, errlen) != 0) {
            close(fd);
            goto fail;
        }
    }
    srv->d = mhd.start_daemon(
        MHD_USE_EPOLL, 0, NULL, NULL, on_request, srv, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_CONNECTION_LIMIT, cap + CONN_SLACK, MHD_OPTION_CONNECTION_TIMEOUT, timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)(o->conn_memory ? o->conn_memory : DEFAULT_CONN_MEMORY),
        MHD_OPTION_NOTIFY_CONNECTION, notify_conn, srv, MHD_OPTION_NOTIFY_COMPLETED, notify_done,
        srv, MHD_OPTION_END);
    if (!srv->d) {
        close(fd);
        snprintf(err, errlen, "cannot start the HTTP server on %s", srv->where);
        goto fail;
    }
    const union MHD_DaemonInfo *di = mhd.get_daemon_info(srv->d, MHD_DAEMON_INFO_EPOLL_FD);
    srv->epoll_fd = di ? di->epoll_fd : -1;
    if (srv->epoll_fd < 0) {
        snprintf(err, errlen, "cannot start the HTTP server on %s: no epoll", srv->where);
        goto fail_daemon;
    }
    /* The HTTP thread gets none of the signals the front end handles. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int prc = pthread_create(&srv->thread, NULL, http_main, srv);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (prc != 0) {
        snprintf(err, errlen, "cannot start the HTTP thread: %s", strerror(prc));
        goto fail_daemon;
    }
    srv->thread_started = true;
    *out = srv;
    return 0;
fail_daemon:
    fd = (int)mhd.quiesce_daemon(srv->d);
    mhd.stop_daemon(srv->d);
    if (fd >= 0)
        close(fd);
fail:
    podres_stop(srv->pods);
    pthread_mutex_destroy(&srv->mu);
    close(srv->stop[0]);
    close(srv->stop[1]);
    free(srv);
    return -1;
}

int serve_port(const struct server *srv)
{
    return srv->port;
}

void serve_stop(struct server *srv)
{
    if (!srv)
        return;
    /* The HTTP thread ends first; then the daemon is this thread's: its
     * stop closes every connection (on_connection frees each struct
     * conn) and frees every response, so the server's page reference is
     * the last one. */
    char b = 1;
    ssize_t n = write(srv->stop[1], &b, 1); /* an empty pipe of ours: cannot fail */
    (void)n;
    if (srv->thread_started)
        pthread_join(srv->thread, NULL);
    int fd = (int)mhd.quiesce_daemon(srv->d);
    mhd.stop_daemon(srv->d);
    if (fd >= 0)
        close(fd);
    page_free(srv->cur);
    prom_buf_free(&srv->buf);
    podres_stop(srv->pods);
    pthread_mutex_destroy(&srv->mu);
    close(srv->stop[0]);
    close(srv->stop[1]);
    free(srv);
}

/* ---- the export mode ------------------------------------------------------ */

static volatile sig_atomic_t quit_requested;
static int quit_fd = -1;

static void on_quit(int sig)
{
    (void)sig;
    quit_requested = 1;
    if (quit_fd >= 0) {
        char b = 1;
        ssize_t n = write(quit_fd, &b, 1);
        (void)n;
    }
}

int serve_run(struct collector *col, const struct serve_opts *o)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK) != 0) {
        fprintf(stderr, "mig-gpu-mon: %s\n", strerror(errno));
        return 1;
    }
    quit_fd = pfd[1];
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_quit;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    int rc = 1;
    char err[512];
    struct server *srv = NULL;
    struct engine *eng = NULL;
    struct snapshot snap;
    memset(&snap, 0, sizeof(snap));
    if (serve_start(&srv, o, err, sizeof(err)) != 0) {
        fprintf(stderr, "mig-gpu-mon: %s\n", err);
        rc = 2;
        goto out;
    }
    struct engine_opts eo = {.interval_ms = o->interval_ms};
    if (engine_start(&eng, col, &eo) != 0) {
        fprintf(stderr, "mig-gpu-mon: cannot start the sampling thread\n");
        goto out;
    }
    fprintf(stderr, "mig-gpu-mon: serving %s/metrics and /health\n", srv->where);
    if (srv->note[0])
        fprintf(stderr, "mig-gpu-mon: %s\n", srv->note);
    while (!quit_requested) {
        struct pollfd p[2] = {{.fd = engine_fd(eng), .events = POLLIN},
                              {.fd = pfd[0], .events = POLLIN}};
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (quit_requested)
            break;
        if (engine_acquire(eng, &snap) && serve_publish(srv, &snap) != 0)
            fprintf(stderr, "mig-gpu-mon: out of memory rendering the page; the previous one "
                            "is served\n");
    }
    rc = 0;
out:
    serve_stop(srv);
    engine_stop(eng);
    snapshot_free(&snap);
    quit_fd = -1;
    close(pfd[0]);
    close(pfd[1]);
    return rc;
}

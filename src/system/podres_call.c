/*
 * podres_call.c — one call of the kubelet's pod-resources List
 * (podres.h's podres_call, podres_call.h).
 *
 * A non-blocking unix-socket connection, an HTTP/2 client session of
 * libnghttp2 driven through its memory interface
 * (nghttp2_session_mem_send / mem_recv) by one poll loop that also watches
 * the deadline and the stop pipe, so nothing here can wait longer than the
 * deadline. One request, as gRPC has it: POST /v1.PodResourcesLister/List,
 * content-type application/grpc, te: trailers, grpc-timeout, and a body of
 * one empty message (the 5-byte prefix: ListPodResourcesRequest has no
 * field). The answer is taken when its stream closes: :status 200,
 * grpc-status 0 (from the trailers, or from the headers of a
 * trailers-only answer), one message (podres_proto.c decodes it). A new
 * connection each time: one call every few seconds does not need one kept.
 *
 * libnghttp2 is opened when the socket first exists (nghttp2_load), not
 * linked, like libmicrohttpd in serve.c: the binary needs it only on a
 * Kubernetes node. Only its types and constants come from the header.
 */
#include "system/podres_call.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "core/clock.h"
#include "core/libpath.h"
#include "system/podres.h"

/* ---- libnghttp2 ------------------------------------------------------------ */

/* The ABI name since nghttp2 1.0 (Debian's libnghttp2-14, Fedora's
 * libnghttp2). */
#define NGHTTP2_SONAME "libnghttp2.so.14"

/* The ssize_t interface (mem_send, mem_recv, the data provider) is what
 * every libnghttp2.so.14 has; headers from 1.61 on mark it deprecated in
 * favour of *2 variants that older libraries lack. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static struct {
    __typeof__(nghttp2_session_callbacks_new) *callbacks_new;
    __typeof__(nghttp2_session_callbacks_del) *callbacks_del;
    __typeof__(nghttp2_session_callbacks_set_on_header_callback) *set_on_header;
    __typeof__(nghttp2_session_callbacks_set_on_data_chunk_recv_callback) *set_on_data;
    __typeof__(nghttp2_session_callbacks_set_on_stream_close_callback) *set_on_close;
    __typeof__(nghttp2_session_client_new) *client_new;
    __typeof__(nghttp2_session_del) *session_del;
    __typeof__(nghttp2_submit_settings) *submit_settings;
    __typeof__(nghttp2_submit_request) *submit_request;
    __typeof__(nghttp2_session_mem_send) *mem_send;
    __typeof__(nghttp2_session_mem_recv) *mem_recv;
    __typeof__(nghttp2_session_want_read) *want_read;
    __typeof__(nghttp2_session_want_write) *want_write;
    __typeof__(nghttp2_strerror) *strerror_;
} ng;
#pragma GCC diagnostic pop
static bool ng_ok;
static char ng_err[400];
static pthread_once_t ng_once = PTHREAD_ONCE_INIT;

static void nghttp2_load_once(void)
{
    char why[300];
    void *h = libpath_open(NGHTTP2_SONAME, NULL, 0, why, sizeof(why));
    if (!h) {
        snprintf(ng_err, sizeof(ng_err),
                 "pod labels need libnghttp2 (%s); install it (Debian: libnghttp2-14, Fedora: "
                 "libnghttp2)",
                 why);
        return;
    }
    static const struct {
        const char *name;
        size_t off;
    } syms[] = {
#define NG_SYM(field, name) {name, offsetof(__typeof__(ng), field)}
        NG_SYM(callbacks_new, "nghttp2_session_callbacks_new"),
        NG_SYM(callbacks_del, "nghttp2_session_callbacks_del"),
        NG_SYM(set_on_header, "nghttp2_session_callbacks_set_on_header_callback"),
        NG_SYM(set_on_data, "nghttp2_session_callbacks_set_on_data_chunk_recv_callback"),
        NG_SYM(set_on_close, "nghttp2_session_callbacks_set_on_stream_close_callback"),
        NG_SYM(client_new, "nghttp2_session_client_new"),
        NG_SYM(session_del, "nghttp2_session_del"),
        NG_SYM(submit_settings, "nghttp2_submit_settings"),
        NG_SYM(submit_request, "nghttp2_submit_request"),
        NG_SYM(mem_send, "nghttp2_session_mem_send"),
        NG_SYM(mem_recv, "nghttp2_session_mem_recv"),
        NG_SYM(want_read, "nghttp2_session_want_read"),
        NG_SYM(want_write, "nghttp2_session_want_write"),
        NG_SYM(strerror_, "nghttp2_strerror"),
#undef NG_SYM
    };
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        void *p = dlsym(h, syms[i].name);
        if (!p) {
            snprintf(ng_err, sizeof(ng_err), "%s lacks %s", NGHTTP2_SONAME, syms[i].name);
            dlclose(h);
            return;
        }
        memcpy((char *)&ng + syms[i].off, &p, sizeof(p));
    }
    ng_ok = true;
}

static int nghttp2_load(char *err, size_t errlen)
{
    pthread_once(&ng_once, nghttp2_load_once);
    if (ng_ok)
        return 0;
    snprintf(err, errlen, "%s", ng_err);
    return -1;
}

/* ---- one call ----------------------------------------------------------------- */



static const char PATH_LIST[] = "/v1.PodResourcesLister/List";
/* ListPodResourcesRequest{}: no compression, length 0. */
static const uint8_t REQUEST[5] = {0, 0, 0, 0, 0};

struct h2 {
    int32_t stream;
    bool closed;          /* our stream closed: the answer is whole (or reset) */
    uint32_t reset_code;  /* its HTTP/2 error code, 0 for a clean close */
    int status;           /* :status, 0 none yet */
    bool grpc_type;       /* content-type application/grpc[+proto|;…] */
    int grpc_status;      /* -1: none */
    char grpc_message[200];
    uint8_t *body;
    size_t len, cap;
    bool too_big;
    size_t req_off;
};

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user)
{
    (void)s;
    (void)flags;
    struct h2 *h = user;
    if (frame->hd.stream_id != h->stream)
        return 0;
    char v[sizeof(h->grpc_message)];
    size_t vn = valuelen < sizeof(v) - 1 ? valuelen : sizeof(v) - 1;
    memcpy(v, value, vn);
    v[vn] = '\0';
#define NAME_IS(lit) (namelen == sizeof(lit) - 1 && memcmp(name, lit, namelen) == 0)
    if (NAME_IS(":status")) {
        h->status = atoi(v);
    } else if (NAME_IS("content-type")) {
        h->grpc_type = strncasecmp(v, "application/grpc", 16) == 0 &&
                       (v[16] == '\0' || v[16] == '+' || v[16] == ';');
    } else if (NAME_IS("grpc-status")) {
        char *end;
        long st = strtol(v, &end, 10);
        h->grpc_status = end != v && *end == '\0' && st >= 0 && st < 1000 ? (int)st : 999;
    } else if (NAME_IS("grpc-message")) {
        /* percent-encoded (gRPC over HTTP/2) */
        size_t o = 0;
        for (size_t i = 0; i < vn && o < sizeof(h->grpc_message) - 1; i++) {
            int hi = i + 2 < vn ? hexval(v[i + 1]) : -1, lo = hi >= 0 ? hexval(v[i + 2]) : -1;
            if (v[i] == '%' && lo >= 0) {
                h->grpc_message[o++] = (char)(hi << 4 | lo);
                i += 2;
            } else {
                h->grpc_message[o++] = v[i];
            }
        }
        h->grpc_message[o] = '\0';
    }
#undef NAME_IS
    return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t stream_id, const uint8_t *data,
                   size_t len, void *user)
{
    (void)s;
    (void)flags;
    struct h2 *h = user;
    if (stream_id != h->stream)
        return 0;
    if (h->len + len > (size_t)PODRES_MAX_MESSAGE + 5) {
        h->too_big = true;
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    if (h->len + len > h->cap) {
        size_t n = h->cap ? h->cap : 16384;
        while (n < h->len + len)
            n *= 2;
        uint8_t *b = realloc(h->body, n);
        if (!b)
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        h->body = b;
        h->cap = n;
    }
    memcpy(h->body + h->len, data, len);
    h->len += len;
    return 0;
}

static int on_close(nghttp2_session *s, int32_t stream_id, uint32_t error_code, void *user)
{
    (void)s;
    struct h2 *h = user;
    if (stream_id == h->stream) {
        h->closed = true;
        h->reset_code = error_code;
    }
    return 0;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static ssize_t read_request(nghttp2_session *s, int32_t stream_id, uint8_t *buf, size_t length,
                            uint32_t *data_flags, nghttp2_data_source *source, void *user)
{
    (void)s;
    (void)stream_id;
    (void)source;
    struct h2 *h = user;
    size_t n = sizeof(REQUEST) - h->req_off;
    if (n > length)
        n = length;
    memcpy(buf, REQUEST + h->req_off, n);
    h->req_off += n;
    if (h->req_off == sizeof(REQUEST))
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}
#pragma GCC diagnostic pop

static const char *grpc_code_name(int c)
{
    static const char *const names[] = {
        "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
        "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
        "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
        "UNAUTHENTICATED"};
    return c >= 0 && (size_t)c < sizeof(names) / sizeof(names[0]) ? names[c] : "unknown code";
}

static int ms_left(uint64_t deadline)
{
    uint64_t now = clock_mono_ns();
    return now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
}

/* Connect to path (non-blocking) within the deadline: the fd, or -1. */
static int connect_unix(const char *path, uint64_t deadline, int stop_fd, enum call_kind *kind,
                        char *err, size_t errlen)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(a.sun_path)) {
        snprintf(err, errlen, "the path is longer than a unix socket's %zu bytes",
                 sizeof(a.sun_path) - 1);
        *kind = CK_CONNECT;
        return -1;
    }
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        *kind = CK_CONNECT;
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
        return fd;
    int e = errno;
    if (e == EINPROGRESS) {
        struct pollfd p[2] = {{.fd = fd, .events = POLLOUT}, {.fd = stop_fd, .events = POLLIN}};
        int n = poll(p, stop_fd >= 0 ? 2 : 1, ms_left(deadline));
        socklen_t sl = sizeof(e);
        if (n > 0 && p[0].revents && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) == 0 &&
            e == 0)
            return fd;
        if (n == 0)
            e = ETIMEDOUT;
    }
    close(fd);
    *kind = CK_CONNECT;
    if (e == ECONNREFUSED)
        snprintf(err, errlen, "nothing listens on the socket (connection refused)");
    else if (e == EACCES)
        snprintf(err, errlen, "cannot connect: permission denied (the kubelet's socket is "
                              "root's: run the exporter as root)");
    else if (e == EAGAIN)
        snprintf(err, errlen, "the socket takes no connection now (its backlog is full)");
    else
        snprintf(err, errlen, "cannot connect: %s", strerror(e));
    return -1;
}

/* Write what the session has to send, as far as the socket takes it; *out,
 * *outlen: what is left of the chunk being sent. 0, or -1 with why. */
static int h2_flush(nghttp2_session *sess, int fd, const uint8_t **out, size_t *outlen,
                    char *err, size_t errlen)
{
    for (;;) {
        if (*outlen == 0) {
            ssize_t n = ng.mem_send(sess, out);
            if (n < 0) {
                snprintf(err, errlen, "HTTP/2: %s", ng.strerror_((int)n));
                return -1;
            }
            if (n == 0)
                return 0;
            *outlen = (size_t)n;
        }
        ssize_t w = send(fd, *out, *outlen, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            snprintf(err, errlen, "the connection failed while asking: %s", strerror(errno));
            return -1;
        }
        *out += w;
        *outlen -= (size_t)w;
    }
}

/* The exchange on a connected fd: CK_OK with h filled, or the kind. */
static enum call_kind h2_exchange(int fd, struct h2 *h, unsigned deadline_ms, uint64_t deadline,
                                  int stop_fd, char *err, size_t errlen)
{
    nghttp2_session_callbacks *cb = NULL;
    nghttp2_session *sess = NULL;
    enum call_kind kind = CK_HTTP2;
    if (ng.callbacks_new(&cb) != 0) {
        snprintf(err, errlen, "out of memory for HTTP/2");
        return CK_HTTP2;
    }
    ng.set_on_header(cb, on_header);
    ng.set_on_data(cb, on_data);
    ng.set_on_close(cb, on_close);
    int rc = ng.client_new(&sess, cb, h);
    ng.callbacks_del(cb);
    if (rc != 0) {
        snprintf(err, errlen, "HTTP/2: %s", ng.strerror_(rc));
        return CK_HTTP2;
    }
    /* No server push; room for the whole answer in the stream's window, so
     * the kubelet need not wait for our window updates. */
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, PODRES_MAX_MESSAGE + 5},
    };
    char timeout[16];
    snprintf(timeout, sizeof(timeout), "%um", deadline_ms);
#define NV(n, v)                                                                         \
    {                                                                                    \
        (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE \
    }
    const nghttp2_nv hdrs[] = {
        NV(":method", "POST"),
        NV(":scheme", "http"),
        NV(":path", PATH_LIST),
        NV(":authority", "localhost"),
        NV("content-type", "application/grpc"),
        NV("te", "trailers"),
        NV("grpc-timeout", timeout),
        NV("user-agent", "mig-gpu-mon/" MIGMON_VERSION),
    };
#undef NV
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    nghttp2_data_provider body = {.read_callback = read_request};
#pragma GCC diagnostic pop
    if ((rc = ng.submit_settings(sess, NGHTTP2_FLAG_NONE, iv, sizeof(iv) / sizeof(iv[0]))) != 0 ||
        (h->stream = ng.submit_request(sess, NULL, hdrs, sizeof(hdrs) / sizeof(hdrs[0]), &body,
                                       NULL)) < 0) {
        snprintf(err, errlen, "HTTP/2: %s", ng.strerror_(rc ? rc : h->stream));
        goto out;
    }
    const uint8_t *out = NULL;
    size_t outlen = 0;
    uint8_t buf[16384];
    while (!h->closed) {
        if (h2_flush(sess, fd, &out, &outlen, err, errlen) != 0)
            goto out;
        if (!ng.want_read(sess) && !ng.want_write(sess) && outlen == 0) {
            snprintf(err, errlen, "the HTTP/2 session ended before the answer (a GOAWAY, or "
                                  "bytes that are not HTTP/2)");
            goto out;
        }
        int left = ms_left(deadline);
        if (left == 0) {
            snprintf(err, errlen, "no answer within %u ms", deadline_ms);
            kind = CK_TIMEOUT;
            goto out;
        }
        struct pollfd p[2] = {{.fd = fd, .events = POLLIN | (outlen ? POLLOUT : 0)},
                              {.fd = stop_fd, .events = POLLIN}};
        int n = poll(p, stop_fd >= 0 ? 2 : 1, left);
        if (n < 0 && errno != EINTR) {
            snprintf(err, errlen, "poll: %s", strerror(errno));
            goto out;
        }
        if (n > 0 && stop_fd >= 0 && p[1].revents) {
            snprintf(err, errlen, "stopped");
            kind = CK_STOPPED;
            goto out;
        }
        if (n <= 0 || !(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        ssize_t r = recv(fd, buf, sizeof(buf), 0);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            continue;
        if (r < 0) {
            snprintf(err, errlen, "the connection failed: %s", strerror(errno));
            goto out;
        }
        if (r == 0) {
            snprintf(err, errlen, "the kubelet closed the connection before answering");
            goto out;
        }
        ssize_t used = ng.mem_recv(sess, buf, (size_t)r);
        if (used < 0) {
            if (h->too_big)
                snprintf(err, errlen, "the answer is over %u bytes", PODRES_MAX_MESSAGE);
            else
                snprintf(err, errlen, "not an HTTP/2 answer (%s)", ng.strerror_((int)used));
            goto out;
        }
    }
    kind = CK_OK;
out:
    ng.session_del(sess);
    return kind;
}

enum call_kind podres_call_kind(const char *path, unsigned deadline_ms, int stop_fd,
                           struct podres_list **out, char *err, size_t errlen)
{
    *out = NULL;
    if (nghttp2_load(err, errlen) != 0 || podres_proto_load(err, errlen) != 0)
        return CK_LIBRARY;
    uint64_t deadline = clock_mono_ns() + (uint64_t)deadline_ms * 1000000ull;
    enum call_kind kind = CK_CONNECT;
    int fd = connect_unix(path, deadline, stop_fd, &kind, err, errlen);
    if (fd < 0)
        return kind;
    struct h2 h = {.grpc_status = -1};
    kind = h2_exchange(fd, &h, deadline_ms, deadline, stop_fd, err, errlen);
    close(fd);
    if (kind != CK_OK)
        goto done;
    kind = CK_GRPC;
    const uint8_t *msg;
    size_t mlen;
    if (h.grpc_status == 4) {
        /* DEADLINE_EXCEEDED: the kubelet holds the grpc-timeout we sent and
         * may give up a moment before we do; the same failure */
        snprintf(err, errlen, "no answer within %u ms (the kubelet's DEADLINE_EXCEEDED)",
                 deadline_ms);
        kind = CK_TIMEOUT;
    } else if (h.grpc_status > 0) {
        snprintf(err, errlen, "the kubelet answered gRPC status %d (%s)%s%s", h.grpc_status,
                 grpc_code_name(h.grpc_status), h.grpc_message[0] ? ": " : "", h.grpc_message);
    } else if (h.reset_code != 0) {
        snprintf(err, errlen, "the kubelet reset the stream (HTTP/2 error %u)", h.reset_code);
        kind = CK_HTTP2;
    } else if (h.status != 200) {
        snprintf(err, errlen, "the kubelet answered HTTP status %d, not 200", h.status);
    } else if (!h.grpc_type) {
        snprintf(err, errlen, "the answer is not gRPC (content-type)");
    } else if (h.grpc_status < 0) {
        snprintf(err, errlen, "the answer has no grpc-status");
    } else if (podres_grpc_unframe(h.body, h.len, &msg, &mlen, err, errlen) != 0 ||
               podres_decode(msg, mlen, out, err, errlen) != 0) {
        kind = CK_MESSAGE;
    } else {
        (*out)->listed_ns = clock_mono_ns();
        kind = CK_OK;
    }
done:
    free(h.body);
    return kind;
}

int podres_call(const char *socket, unsigned deadline_ms, int stop_fd, struct podres_list **out,
                char *err, size_t errlen)
{
    return podres_call_kind(socket, deadline_ms, stop_fd, out, err, errlen) == CK_OK ? 0 : -1;
}


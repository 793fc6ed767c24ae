#include "backend/prometheus/prom_client.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/libpath.h"
#include "core/trust.h"

#include "core/text.h"

struct promc {
    CURL *h;
    char *base;             /* the URL without a trailing '/' */
    struct curl_slist *hdr; /* Authorization: Bearer … */
    char *userpwd;          /* basic authentication, or NULL */
    char *ca_file;          /* the CA certificates to trust, or NULL: the system's */
    atomic_bool aborted;
    /* the answer being read: into buf, or through ps as it comes */
    char *buf;
    size_t len, cap, max;
    bool too_big;
    struct prom_stream *ps;
    size_t got;          /* bytes of the answer so far (decoded) */
    uint64_t got_total;  /* of every answer since open */
};

/*
 * libcurl is opened when a fleet view starts (dlopen), not linked, as
 * libmicrohttpd is for the exporter: the monitor runs where it is absent
 * (the portable binary, the image), and only --prometheus needs it. Its
 * header is a build dependency; the functions used are looked up once.
 */
#define CURL_SONAMES {"libcurl.so.4", "libcurl-gnutls.so.4"}
static struct {
    __typeof__(curl_global_init) *global_init;
    __typeof__(curl_easy_strerror) *easy_strerror;
    __typeof__(curl_slist_append) *slist_append;
    __typeof__(curl_slist_free_all) *slist_free_all;
    __typeof__(curl_easy_init) *easy_init;
    __typeof__(curl_easy_cleanup) *easy_cleanup;
    __typeof__(curl_easy_reset) *easy_reset;
    __typeof__(curl_easy_escape) *easy_escape;
    __typeof__(curl_free) *free;
    __typeof__(curl_easy_setopt) *easy_setopt;
    __typeof__(curl_easy_perform) *easy_perform;
    __typeof__(curl_easy_getinfo) *easy_getinfo;
} cu;
static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static char global_err[512]; /* why libcurl cannot be used; "" when it can */

static void global_init(void)
{
    const char *names[] = CURL_SONAMES;
    void *h = NULL;
    char why[400] = "", first[400] = "";
    for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++) {
        h = libpath_open(names[i], NULL, 0, why, sizeof(why));
        if (!h && i == 0)
            snprintf(first, sizeof(first), "%s", why);
    }
    if (!h) {
        snprintf(global_err, sizeof(global_err),
                 "the fleet view needs libcurl (%s); install it (Debian: libcurl4, Fedora: "
                 "libcurl)",
                 first);
        return;
    }
    static const struct {
        const char *name;
        size_t off;
    } syms[] = {
#define CU_SYM(field) {"curl_" #field, offsetof(__typeof__(cu), field)}
        CU_SYM(global_init), CU_SYM(easy_strerror), CU_SYM(slist_append),
        CU_SYM(slist_free_all), CU_SYM(easy_init), CU_SYM(easy_cleanup),
        CU_SYM(easy_reset), CU_SYM(easy_escape), CU_SYM(free),
        CU_SYM(easy_setopt), CU_SYM(easy_perform), CU_SYM(easy_getinfo),
#undef CU_SYM
    };
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        void *p = dlsym(h, syms[i].name);
        if (!p) {
            snprintf(global_err, sizeof(global_err),
                     "the fleet view needs a newer libcurl (this one lacks %s)", syms[i].name);
            dlclose(h);
            return;
        }
        memcpy((char *)&cu + syms[i].off, &p, sizeof(p));
    }
    CURLcode rc = cu.global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK)
        snprintf(global_err, sizeof(global_err), "libcurl: %s", cu.easy_strerror(rc));
}

/* The credentials file's first line, without its line end and blanks
 * around it; -1 when it cannot be read, or is not a regular file of ours
 * (trust.h: whoever else can write it chooses what we send, and a file
 * that is not ours, /etc/shadow under sudo, is not ours to send). */
static int read_auth(const char *path, char *out, size_t cap, char *err, size_t errlen)
{
    char why[160];
    int fd = trust_open(path, why, sizeof(why));
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0) {
            snprintf(why, sizeof(why), "%s", strerror(errno));
            close(fd);
        }
        snprintf(err, errlen, "--prometheus-auth %s: %s", path, why);
        return -1;
    }
    if (!fgets(out, (int)cap, f))
        out[0] = '\0';
    fclose(f);
    size_t n = strlen(out);
    while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' '))
        out[--n] = '\0';
    if (!n) {
        snprintf(err, errlen, "--prometheus-auth %s: empty (expected \"Bearer TOKEN\" or "
                 "USER:PASSWORD on the first line)", path);
        return -1;
    }
    return 0;
}

int promc_open(struct promc **out, const char *url, const char *auth_file, char *err,
               size_t errlen)
{
    *out = NULL;
    pthread_once(&global_once, global_init);
    if (global_err[0]) {
        snprintf(err, errlen, "%s", global_err);
        return -1;
    }
    struct promc *c = calloc(1, sizeof(*c));
    if (!c)
        goto nomem;
    c->base = strdup(url);
    if (!c->base)
        goto nomem;
    size_t n = strlen(c->base);
    while (n && c->base[n - 1] == '/')
        c->base[--n] = '\0';
    if (auth_file) {
        char line[4096];
        if (read_auth(auth_file, line, sizeof(line), err, errlen) != 0)
            goto fail;
        if (strncasecmp(line, "Bearer ", 7) == 0) {
            char h[4200];
            snprintf(h, sizeof(h), "Authorization: Bearer %s", line + 7);
            c->hdr = cu.slist_append(NULL, h);
            if (!c->hdr)
                goto nomem;
        } else if (strchr(line, ':')) {
            c->userpwd = strdup(line);
            if (!c->userpwd)
                goto nomem;
        } else {
            snprintf(err, errlen, "--prometheus-auth %s: expected \"Bearer TOKEN\" or "
                     "USER:PASSWORD on the first line", auth_file);
            goto fail;
        }
        memset(line, 0, sizeof(line));
    }
    c->h = cu.easy_init();
    if (!c->h)
        goto nomem;
    *out = c;
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
fail:
    promc_close(c);
    return -1;
}

int promc_set_ca(struct promc *c, const char *ca_file, char *err, size_t errlen)
{
    FILE *f = fopen(ca_file, "re");
    if (!f) {
        snprintf(err, errlen, "--prometheus-ca %s: %s", ca_file, strerror(errno));
        return -1;
    }
    fclose(f);
    char *dup = strdup(ca_file);
    if (!dup) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    free(c->ca_file);
    c->ca_file = dup;
    return 0;
}

int promc_open_like(struct promc **out, const struct promc *like, char *err, size_t errlen)
{
    *out = NULL;
    struct promc *c = calloc(1, sizeof(*c));
    if (!c)
        goto nomem;
    c->base = strdup(like->base);
    if (!c->base)
        goto nomem;
    for (const struct curl_slist *h = like->hdr; h; h = h->next) {
        struct curl_slist *n = cu.slist_append(c->hdr, h->data);
        if (!n)
            goto nomem;
        c->hdr = n;
    }
    if (like->userpwd && !(c->userpwd = strdup(like->userpwd)))
        goto nomem;
    if (like->ca_file && !(c->ca_file = strdup(like->ca_file)))
        goto nomem;
    c->h = cu.easy_init();
    if (!c->h)
        goto nomem;
    *out = c;
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
    promc_close(c);
    return -1;
}

void promc_abort(struct promc *c)
{
    if (c)
        atomic_store(&c->aborted, true);
}

static size_t on_data(char *p, size_t size, size_t nmemb, void *arg)
{
    struct promc *c = arg;
    size_t n = size * nmemb;
    if (atomic_load(&c->aborted))
        return 0;
    c->got_total += n;
    if (c->ps) { /* read as it comes: nothing kept but the series being read */
        if (c->got + n > c->max) {
            c->too_big = true;
            return 0;
        }
        c->got += n;
        return prom_stream_feed(c->ps, p, n) == 0 ? n : 0;
    }
    if (c->len + n > c->max) {
        c->too_big = true;
        return 0; /* curl ends the transfer: CURLE_WRITE_ERROR */
    }
    if (c->len + n + 1 > c->cap) {
        size_t cap = c->cap ? c->cap : 65536;
        while (cap < c->len + n + 1)
            cap *= 2;
        char *b = realloc(c->buf, cap);
        if (!b)
            return 0;
        c->buf = b;
        c->cap = cap;
    }
    memcpy(c->buf + c->len, p, n);
    c->len += n;
    c->buf[c->len] = '\0';
    return n;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    struct promc *c = arg;
    return atomic_load(&c->aborted) ? 1 : 0;
}

int promc_parse(const char *buf, size_t len, long code, const char *type_wanted, json_t **result,
                char *err, size_t errlen)
{
    *result = NULL;
    json_error_t je;
    /* The server's text (its error, or what jansson quotes of a bad
     * answer) enters the program here: cleaned and cut (text.h) before it
     * is put in any message, which the screen and every format show; the
     * message is cut to err on a character boundary. */
    char said[301], msg[512];
    json_t *root = json_loadb(buf ? buf : "", len, 0, &je);
    if (!root) {
        text_take(said, sizeof(said), je.text);
        snprintf(msg, sizeof(msg), "answer is not JSON (HTTP %ld, %zu bytes): %s", code, len, said);
        text_take(err, errlen, msg);
        return -1;
    }
    const char *status = json_string_value(json_object_get(root, "status"));
    if (!status || strcmp(status, "success") != 0) {
        const char *e = json_string_value(json_object_get(root, "error"));
        text_take(said, sizeof(said), e ? e : "no \"status\": \"success\"");
        snprintf(msg, sizeof(msg), "HTTP %ld: %s", code, said);
        text_take(err, errlen, msg);
        json_decref(root);
        return -1;
    }
    json_t *data = json_object_get(root, "data");
    const char *type = json_string_value(json_object_get(data, "resultType"));
    json_t *res = json_object_get(data, "result");
    if (!type || strcmp(type, type_wanted) != 0 || !json_is_array(res)) {
        text_take(said, 41, type ? type : "missing");
        snprintf(err, errlen, "answer is not %s (resultType %s)",
                 strcmp(type_wanted, "matrix") == 0 ? "a range vector" : "an instant vector",
                 said);
        json_decref(root);
        return -1;
    }
    *result = json_incref(res);
    json_decref(root);
    return 0;
}

/*
 * GET base + path + "?" + params (post: POST base + path with params as
 * its form body, for queries of any length), the answer's data.result (of
 * resultType type_wanted) in *result; or, with ps, the answer read through
 * ps as it comes (result unused). params: already URL-encoded.
 */
static int request(struct promc *c, const char *path, const char *params, bool post,
                   unsigned timeout_ms, size_t max_bytes, const char *type_wanted,
                   struct prom_stream *ps, json_t **result, char *err, size_t errlen)
{
    if (result)
        *result = NULL;
    if (atomic_load(&c->aborted)) {
        snprintf(err, errlen, "stopped");
        return -1;
    }
    size_t ulen = strlen(c->base) + strlen(path) + (post ? 0 : strlen(params)) + 8;
    char *url = malloc(ulen);
    if (!url) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (post)
        snprintf(url, ulen, "%s%s", c->base, path);
    else
        snprintf(url, ulen, "%s%s?%s", c->base, path, params);
    c->len = 0;
    c->got = 0;
    c->max = max_bytes;
    c->too_big = false;
    c->ps = ps;
    CURL *h = c->h;
    cu.easy_reset(h);
    cu.easy_setopt(h, CURLOPT_URL, url);
    if (post) {
        cu.easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(params));
        cu.easy_setopt(h, CURLOPT_POSTFIELDS, params);
    }
    cu.easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout_ms ? timeout_ms : 1));
    cu.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(timeout_ms ? timeout_ms : 1));
    cu.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    cu.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    cu.easy_setopt(h, CURLOPT_WRITEDATA, c);
    cu.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    cu.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    cu.easy_setopt(h, CURLOPT_XFERINFODATA, c);
    cu.easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""); /* whatever this libcurl decodes */
    cu.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    cu.easy_setopt(h, CURLOPT_USERAGENT, "mig-gpu-mon");
    if (c->ca_file)
        cu.easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
    if (c->hdr)
        cu.easy_setopt(h, CURLOPT_HTTPHEADER, c->hdr);
    if (c->userpwd) {
        cu.easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        cu.easy_setopt(h, CURLOPT_USERPWD, c->userpwd);
    }
    CURLcode rc = cu.easy_perform(h);
    free(url);
    c->ps = NULL;
    long code = 0;
    cu.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (ps && ps->failed && rc == CURLE_WRITE_ERROR && !c->too_big) /* the reader refused it */
        return prom_stream_end(ps, code, err, errlen);
    if (atomic_load(&c->aborted)) {
        snprintf(err, errlen, "stopped");
        return -1;
    }
    if (c->too_big) {
        snprintf(err, errlen, "answer larger than %zu bytes, cut off", max_bytes);
        return -1;
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        snprintf(err, errlen, "no answer within %u ms", timeout_ms);
        return -1;
    }
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s", cu.easy_strerror(rc));
        return -1;
    }
    /* Prometheus answers errors (400 bad query, 422, 503) with a JSON body */
    if (ps)
        return prom_stream_end(ps, code, err, errlen);
    return promc_parse(c->buf, c->len, code, type_wanted, result, err, errlen);
}

/* "query=" and promql URL-encoded, in a new string (free), or NULL. */
static char *query_param(struct promc *c, const char *promql)
{
    char *q = cu.easy_escape(c->h, promql, 0);
    if (!q)
        return NULL;
    size_t n = strlen(q) + 8;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "query=%s", q);
    cu.free(q);
    return p;
}

int promc_query(struct promc *c, const char *promql, unsigned timeout_ms, size_t max_bytes,
                json_t **result, char *err, size_t errlen)
{
    *result = NULL;
    char *p = query_param(c, promql);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = request(c, "/api/v1/query", p, true, timeout_ms, max_bytes, "vector", NULL, result,
                     err, errlen);
    free(p);
    return rc;
}

int promc_query_each(struct promc *c, const char *promql, unsigned timeout_ms, size_t max_bytes,
                     prom_item_fn fn, void *ctx, char *err, size_t errlen)
{
    char *p = query_param(c, promql);
    struct prom_stream ps;
    if (!p || prom_stream_init(&ps, fn, ctx) != 0) {
        free(p);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = request(c, "/api/v1/query", p, true, timeout_ms, max_bytes, "vector", &ps, NULL, err,
                     errlen);
    prom_stream_free(&ps);
    free(p);
    return rc;
}

uint64_t promc_bytes(const struct promc *c)
{
    return c->got_total;
}

int promc_query_range(struct promc *c, const char *promql, int64_t start_ms, int64_t end_ms,
                      unsigned step_ms, unsigned timeout_ms, size_t max_bytes, json_t **result,
                      char *err, size_t errlen)
{
    *result = NULL;
    char *p = query_param(c, promql);
    size_t n = p ? strlen(p) + 96 : 0;
    char *all = p ? malloc(n) : NULL;
    if (!all) {
        free(p);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* seconds with the milliseconds: Prometheus evaluates at start + i * step exactly */
    snprintf(all, n, "%s&start=%lld.%03lld&end=%lld.%03lld&step=%u.%03u", p,
             (long long)(start_ms / 1000), (long long)(start_ms % 1000),
             (long long)(end_ms / 1000), (long long)(end_ms % 1000), step_ms / 1000,
             step_ms % 1000);
    free(p);
    int rc = request(c, "/api/v1/query_range", all, false, timeout_ms, max_bytes, "matrix", NULL,
                     result, err, errlen);
    free(all);
    return rc;
}

void promc_close(struct promc *c)
{
    if (!c)
        return;
    if (c->h)
        cu.easy_cleanup(c->h);
    cu.slist_free_all(c->hdr);
    if (c->userpwd) {
        memset(c->userpwd, 0, strlen(c->userpwd));
        free(c->userpwd);
    }
    free(c->base);
    free(c->ca_file);
    free(c->buf);
    free(c);
}

size_t promql_quote(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    if (!cap)
        return 0;
    for (; *s; s++) {
        char esc[8];
        unsigned char ch = (unsigned char)*s;
        if (ch == '\\' || ch == '"')
            snprintf(esc, sizeof(esc), "\\%c", ch);
        else if (ch == '\n')
            snprintf(esc, sizeof(esc), "\\n");
        else if (ch < 0x20 || ch == 0x7f)
            snprintf(esc, sizeof(esc), "\\x%02x", ch);
        else
            esc[0] = (char)ch, esc[1] = '\0';
        size_t l = strlen(esc);
        if (n + l + 1 > cap)
            break;
        memcpy(out + n, esc, l);
        n += l;
    }
    out[n] = '\0';
    return n;
}

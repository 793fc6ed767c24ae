/*
 * mhd_load.c — opens libmicrohttpd for the exporter (src/serve/serve.c) and
 * resolves the functions it calls (mhd_load.h).
 *
 * libmicrohttpd is opened when a server starts (mhd_load), not linked: it
 * brings GnuTLS and eight more libraries with it, and every other mode
 * (the interactive monitor, --once, record, the GPM helper) would load and
 * relocate them at each start for nothing: about 1 ms and 2.5 MB of
 * resident memory. Only its types and constants come from the header.
 */
#include "serve/mhd_load.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/libpath.h"

/* The library's ABI name, as Debian's libmicrohttpd12 and Fedora's
 * libmicrohttpd install it; the header's types are that ABI's. */
#define MHD_SONAME "libmicrohttpd.so.12"

/* mhd, mhd_ok and mhd_err are written once by mhd_load_once (under
 * mhd_once), read-only afterwards. */
struct mhd_api mhd;
static bool mhd_ok;
static char mhd_err[512]; /* why it could not be loaded */
static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;

static void mhd_load_once(void)
{
    char why[400];
    void *h = libpath_open(MHD_SONAME, NULL, 0, why, sizeof(why));
    if (!h) {
        snprintf(mhd_err, sizeof(mhd_err),
                 "the HTTP server needs libmicrohttpd (%s); install it (Debian: libmicrohttpd12, "
                 "Fedora: libmicrohttpd)",
                 why);
        return;
    }
    static const struct {
        const char *name;
        size_t off;
    } syms[] = {
#define MHD_SYM(field, name) {name, offsetof(__typeof__(mhd), field)}
        MHD_SYM(start_daemon, "MHD_start_daemon"),
        MHD_SYM(stop_daemon, "MHD_stop_daemon"),
        MHD_SYM(quiesce_daemon, "MHD_quiesce_daemon"),
        MHD_SYM(create_response_from_buffer, "MHD_create_response_from_buffer"),
        MHD_SYM(create_response_cls, "MHD_create_response_from_buffer_with_free_callback_cls"),
        MHD_SYM(add_response_header, "MHD_add_response_header"),
        MHD_SYM(queue_response, "MHD_queue_response"),
        MHD_SYM(destroy_response, "MHD_destroy_response"),
        MHD_SYM(lookup_connection_value, "MHD_lookup_connection_value"),
        MHD_SYM(get_connection_info, "MHD_get_connection_info"),
        MHD_SYM(get_daemon_info, "MHD_get_daemon_info"),
        MHD_SYM(get_timeout, "MHD_get_timeout"),
        MHD_SYM(run, "MHD_run"),
#undef MHD_SYM
    };
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        void *p = dlsym(h, syms[i].name);
        if (!p) {
            snprintf(mhd_err, sizeof(mhd_err),
                     "the HTTP server needs a newer libmicrohttpd (this one lacks %s)",
                     syms[i].name);
            dlclose(h);
            return;
        }
        /* POSIX guarantees function pointers round-trip through void *. */
        memcpy((char *)&mhd + syms[i].off, &p, sizeof(p));
    }
    mhd_ok = true;
}

int mhd_load(char *err, size_t errlen)
{
    pthread_once(&mhd_once, mhd_load_once);
    if (!mhd_ok) {
        snprintf(err, errlen, "%s", mhd_err);
        return -1;
    }
    return 0;
}

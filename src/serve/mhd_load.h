/*
 * mhd_load.h — libmicrohttpd, opened at run time (dlopen) for the exporter:
 * the functions src/serve/serve.c calls, by the header's own types.
 */
#ifndef MIGMON_MHD_LOAD_H
#define MIGMON_MHD_LOAD_H

#include <stddef.h>

#include <microhttpd.h>

struct mhd_api {
    __typeof__(MHD_start_daemon) *start_daemon;
    __typeof__(MHD_stop_daemon) *stop_daemon;
    __typeof__(MHD_quiesce_daemon) *quiesce_daemon;
    __typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
    __typeof__(MHD_create_response_from_buffer_with_free_callback_cls) *create_response_cls;
    __typeof__(MHD_add_response_header) *add_response_header;
    __typeof__(MHD_queue_response) *queue_response;
    __typeof__(MHD_destroy_response) *destroy_response;
    __typeof__(MHD_lookup_connection_value) *lookup_connection_value;
    __typeof__(MHD_get_connection_info) *get_connection_info;
    __typeof__(MHD_get_daemon_info) *get_daemon_info;
    __typeof__(MHD_get_timeout) *get_timeout;
    __typeof__(MHD_run) *run;
};

/* The functions, filled by the first mhd_load that succeeds; read-only
 * afterwards, and only to be called after mhd_load returned 0. */
extern struct mhd_api mhd;

/* 0 when libmicrohttpd is loaded; else -1 and why in err. The library
 * stays loaded for the life of the process (a second server reuses it). */
int mhd_load(char *err, size_t errlen);

#endif

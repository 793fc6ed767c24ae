/*
 * serve_listen.h — the exporter's listening socket (src/serve/serve.c's).
 */
#ifndef MIGMON_SERVE_LISTEN_H
#define MIGMON_SERVE_LISTEN_H

#include <stddef.h>

/* A listening socket for "HOST:PORT" (HOST empty: every address, IPv6
 * dual-stack when the host has IPv6, else IPv4). Returns the socket,
 * listening, with the URL for the log line in where (as
 * "http://127.0.0.1:9400") and the port bound in port (useful after port
 * 0); else -1 with one line naming the --listen value in err. */
int serve_listen(const char *spec, char *where, size_t wlen, int *port, char *err,
                 size_t errlen);

#endif

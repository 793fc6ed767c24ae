/*
 * podres_call.h — one pod-resources List call (podres_call.c), with the
 * kind of what went wrong, for podres.c's cache. Private to src/system.
 */
#ifndef MIGMON_PODRES_CALL_H
#define MIGMON_PODRES_CALL_H

#include <stddef.h>

#include "system/podres_proto.h"

/* What went wrong, so that the cache can say it once per kind. */
enum call_kind {
    CK_OK,
    CK_NO_SOCKET, /* no socket at the path */
    CK_LIBRARY,   /* libnghttp2 or libprotobuf-c cannot be used */
    CK_CONNECT,   /* the socket is there, the connection is not */
    CK_TIMEOUT,   /* no whole answer within the deadline (ours or the kubelet's) */
    CK_HTTP2,     /* no HTTP/2 answer: other bytes, a reset, a closed connection */
    CK_GRPC,      /* an HTTP/2 answer that is no gRPC success: status, headers */
    CK_MESSAGE,   /* a gRPC success whose message is no List answer */
    CK_STOPPED,
};

/* podres_call (podres.h), with the kind. */
enum call_kind podres_call_kind(const char *path, unsigned deadline_ms, int stop_fd,
                                struct podres_list **out, char *err, size_t errlen);

#endif

/*
 * serve_listen.c — the exporter's listening socket: the --listen address
 * parsed, resolved, bound and listened on (serve_listen.h).
 */
#include "serve/serve_listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The listen backlog: room for a burst of a thousand connections arriving
 * at once, so that a scraper's SYN among them is not dropped (a dropped
 * SYN is retried after 1 s). The kernel takes at most net.core.somaxconn
 * (4096 by default since Linux 5.4). */
#define LISTEN_BACKLOG 4096

int serve_listen(const char *spec, char *where, size_t wlen, int *port, char *err,
                 size_t errlen)
{
    char host[256];
    const char *colon = strrchr(spec, ':');
    size_t hl = colon ? (size_t)(colon - spec) : 0;
    if (!colon || hl >= sizeof(host)) {
        snprintf(err, errlen, "--listen %s: expected ADDR:PORT or :PORT", spec);
        return -1;
    }
    memcpy(host, spec, hl);
    host[hl] = '\0';
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    char *end;
    errno = 0;
    long pn = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || errno || pn < 0 || pn > 65535) {
        snprintf(err, errlen, "--listen %s: expected a port number from 0 to 65535", spec);
        return -1;
    }
    char ps[8];
    snprintf(ps, sizeof(ps), "%ld", pn);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int gr = getaddrinfo(host[0] ? host : NULL, ps, &hints, &res);
    if (gr != 0) {
        snprintf(err, errlen, "--listen %s: %s", spec, gai_strerror(gr));
        return -1;
    }
    int fd = -1, saved = 0;
    /* Every address: the IPv6 wildcard first (it also takes IPv4). */
    for (int pass = 0; pass < 2 && fd < 0; pass++)
        for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
            if (!host[0] && (pass == 0) != (ai->ai_family == AF_INET6))
                continue;
            if (host[0] && pass == 1)
                break;
            fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
            if (fd < 0) {
                saved = errno;
                continue;
            }
            int one = 1, zero = 0;
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
            if (ai->ai_family == AF_INET6 && !host[0])
                setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
            if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
                listen(fd, LISTEN_BACKLOG) != 0) {
                saved = errno;
                close(fd);
                fd = -1;
            }
        }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(err, errlen, "--listen %s: %s", spec, strerror(saved ? saved : EINVAL));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char addr[INET6_ADDRSTRLEN] = "";
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
            *port = ntohs(a->sin6_port);
            inet_ntop(AF_INET6, &a->sin6_addr, addr, sizeof(addr));
        } else {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss;
            *port = ntohs(a->sin_port);
            inet_ntop(AF_INET, &a->sin_addr, addr, sizeof(addr));
        }
    }
    if (!host[0])
        snprintf(where, wlen, "http://*:%d", *port);
    else if (ss.ss_family == AF_INET6)
        snprintf(where, wlen, "http://[%s]:%d", addr, *port);
    else
        snprintf(where, wlen, "http://%s:%d", addr, *port);
    return fd;
}

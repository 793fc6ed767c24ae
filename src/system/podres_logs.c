/*
 * podres_logs.c — pods named by the kubelet's log directories
 * (podres.h's podres_scan_logs).
 *
 * The kubelet keeps each pod's container logs under
 * <podLogsDir>/<namespace>_<name>_<uid> (/var/log/pods by default, since
 * Kubernetes 1.14; a directory of the kubelet's, not a versioned API, but
 * unchanged since). None of the three parts can hold '_': a namespace is a
 * DNS label, a pod name a DNS subdomain and a UID hex digits and dashes,
 * so a name with exactly two '_' splits one way. It is the one place on
 * the node that names a pod whose UID a process's cgroup gives, where the
 * pod-resources List (which has no UIDs) cannot.
 */
#include "system/podres.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Pods taken from one directory at most: its names are bounded by the
 * node's pod limit (110 by default) several times over. */
#define LOGS_MAX 16384

/* Is s (n bytes) made only of the characters of set, and not empty? */
static bool only(const char *s, size_t n, const char *set)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr(set, s[i]))
            return false;
    return true;
}

/* "NS_NAME_UID" as the kubelet writes it: the lengths of NS and NAME, or
 * false. */
static bool split(const char *d, size_t *nsl, size_t *nml)
{
    const char *a = strchr(d, '_');
    const char *b = a ? strchr(a + 1, '_') : NULL;
    if (!b || strchr(b + 1, '_'))
        return false;
    *nsl = (size_t)(a - d);
    *nml = (size_t)(b - a - 1);
    const char *uid = b + 1;
    return *nsl <= 63 && only(d, *nsl, "abcdefghijklmnopqrstuvwxyz0123456789-") &&
           *nml <= 253 && only(a + 1, *nml, "abcdefghijklmnopqrstuvwxyz0123456789-.") &&
           strlen(uid) == 36 && only(uid, 36, "0123456789abcdef-");
}

int podres_scan_logs(const char *dir, struct podres_list **out)
{
    *out = NULL;
    DIR *dp = opendir(dir);
    if (!dp)
        return -errno;
    struct podres_list *l = calloc(1, sizeof(*l));
    size_t cap = 0, len = 0, dcap = 0;
    size_t *offs = NULL; /* of each taken name in the pool, until it stops moving */
    struct dirent *de;
    int rc = -ENOMEM;
    if (!l)
        goto out;
    while ((de = readdir(dp)) && l->n < LOGS_MAX) {
        size_t nsl, nml;
        if ((de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) || !split(de->d_name, &nsl, &nml))
            continue;
        size_t n = strlen(de->d_name) + 1;
        if (len + n > cap) {
            size_t c2 = cap ? cap * 2 : 4096;
            while (c2 < len + n)
                c2 *= 2;
            char *p = realloc(l->pool, c2);
            if (!p)
                goto out;
            l->pool = p;
            cap = c2;
        }
        if (l->n == dcap) {
            size_t d2 = dcap ? dcap * 2 : 64;
            size_t *o = realloc(offs, d2 * sizeof(*o));
            if (!o)
                goto out;
            offs = o;
            dcap = d2;
        }
        /* NS\0NAME\0UID\0 */
        memcpy(l->pool + len, de->d_name, n);
        l->pool[len + nsl] = '\0';
        l->pool[len + nsl + 1 + nml] = '\0';
        offs[l->n++] = len;
        len += n;
    }
    l->dev = calloc(l->n ? l->n : 1, sizeof(*l->dev));
    if (!l->dev)
        goto out;
    for (size_t i = 0; i < l->n; i++) {
        struct podres_dev *e = &l->dev[i];
        e->ns = l->pool + offs[i];
        e->pod = e->ns + strlen(e->ns) + 1;
        e->id = e->pod + strlen(e->pod) + 1;
        e->resource = e->container = "";
    }
    l->npods = l->n;
    *out = l;
    l = NULL;
    rc = 0;
out:
    closedir(dp);
    free(offs);
    podres_list_free(l);
    return rc;
}

const struct podres_dev *podres_pod_of(const struct podres_list *logs, const char *uid)
{
    if (!logs || !uid[0])
        return NULL;
    for (size_t i = 0; i < logs->n; i++)
        if (strcmp(logs->dev[i].id, uid) == 0)
            return &logs->dev[i];
    return NULL;
}

/*
 * podres.h — which pod holds which GPU or MIG device, from the kubelet's
 * pod-resources API (v1.PodResourcesLister/List, gRPC over the kubelet's
 * unix socket), for the exporter's pod, namespace and container labels
 * (docs/prometheus.md, "Kubernetes").
 *
 * A thread of its own asks the kubelet at start and then every refresh
 * (10 s by default), each call with a deadline (500 ms), and keeps the
 * last answer; a scrape or a sampling tick only takes a reference to that
 * answer (podres_acquire), so neither ever waits on the kubelet. A failed
 * refresh keeps the last answer's labels until it is PODRES_KEEP_REFRESHES
 * refreshes old, then none are given. HTTP/2 is libnghttp2's and the
 * message decoding libprotobuf-c's (podres_proto.h), both opened (dlopen)
 * only once the socket exists. What goes wrong is said once on the log
 * stream when it starts (again when its kind changes, and when it ends),
 * and always in podres_health's line.
 */
#ifndef MIGMON_PODRES_H
#define MIGMON_PODRES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/model.h"
#include "system/podres_proto.h"

#define PODRES_SOCKET_DEFAULT "/var/lib/kubelet/pod-resources/kubelet.sock"
#define PODRES_LOGS_DEFAULT "/var/log/pods"
#define PODRES_REFRESH_DEFAULT_MS 10000u
#define PODRES_DEADLINE_DEFAULT_MS 500u
/* A failed refresh keeps the labels of an answer this many refreshes old
 * at most: a kubelet restart does not cut the pod series, a pod deleted
 * meanwhile is not named for long. */
#define PODRES_KEEP_REFRESHES 3u

struct podres_opts {
    const char *socket;   /* the pod-resources socket; NULL: not asked */
    const char *logs_dir; /* the kubelet's pod log directories, read at each refresh; NULL: not */
    unsigned refresh_ms;  /* 0: PODRES_REFRESH_DEFAULT_MS */
    unsigned deadline_ms; /* 0: PODRES_DEADLINE_DEFAULT_MS */
    FILE *log;            /* where the state is said when it changes; NULL: nowhere */
    /* No socket at the default path at start is a host without Kubernetes:
     * not said in the log (still in /health); said once it was there. */
    bool quiet_absent;
};

struct podres;

/* Start the thread (its first call at once). 0, or -1 with why in err. */
int podres_start(struct podres **out, const struct podres_opts *o, char *err, size_t errlen);
/* Stop it (a call in progress is abandoned at once) and free everything. */
void podres_stop(struct podres *pr);

/* The last answer, while it is young enough (see above), with a reference
 * the caller gives back with podres_release; NULL when there is none to
 * use. Any thread. */
const struct podres_list *podres_acquire(struct podres *pr);
void podres_release(struct podres *pr, const struct podres_list *l);

/* For /health (no newline at the end): what the last call got, or why
 * there are no pod labels, and on a line of its own how many pods the log
 * directories name. Any thread. */
void podres_health(struct podres *pr, char *out, size_t len);

/* The pods of the log directories at the last refresh (podres_scan_logs),
 * with a reference as podres_acquire's; NULL when none were read. */
const struct podres_list *podres_acquire_logs(struct podres *pr);

/* The pods dir's NAMESPACE_NAME_UID directories name (the kubelet's
 * podLogsDir, /var/log/pods by default): each entry's id is the pod's UID,
 * pod and ns its name and namespace, resource and container "". 0 with
 * *out a new list, or -errno when dir cannot be read. */
int podres_scan_logs(const char *dir, struct podres_list **out);
/* The entry of logs (podres_scan_logs's) for the pod of UID uid; NULL
 * when none. */
const struct podres_dev *podres_pod_of(const struct podres_list *logs, const char *uid);

/* One List call on socket (the thread's; public for the tests): within
 * deadline_ms, abandoned early when stop_fd (>= 0) becomes readable. 0 with
 * *out a new list (listed_ns set), or -1 with why in err. */
int podres_call(const char *socket, unsigned deadline_ms, int stop_fd, struct podres_list **out,
                char *err, size_t errlen);

/* Does device id `id`, as the kubelet lists it (of any resource), name d?
 * A "::N" suffix (the device plugin's replicas of a shared GPU) is not
 * part of the id. Forms: "GPU-<uuid>" (a GPU), "MIG-<uuid>" (a MIG
 * device) and "MIG-GPU-<uuid>/<gi>/<ci>" (the MIG form of drivers before
 * R470). GKE's "nvidia<N>[/gi<G>]" is not taken: N is the device node's
 * minor number, which the snapshot does not have, and the NVML index is
 * not always the same. */
bool podres_names(const char *id, const struct device *d);

/* The container of l that holds d; NULL when none does, and also when
 * containers of more than one pod or name hold it (a GPU shared by time
 * slicing: its values cannot be split among them), then *shared is true. */
const struct podres_dev *podres_holder(const struct podres_list *l, const struct device *d,
                                       bool *shared);

#endif

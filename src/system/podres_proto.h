/*
 * podres_proto.h — the kubelet's pod-resources v1 List answer
 * (k8s.io/kubelet/pkg/apis/podresources/v1, api.proto) decoded with
 * protobuf-c into a flat list of the devices each container holds, and the
 * gRPC message framing around it (podres_proto.c).
 *
 * Only the fields the labels need are declared: PodResources.name (1),
 * .namespace (2), .containers (3); ContainerResources.name (1), .devices
 * (2); ContainerDevices.resource_name (1), .device_ids (2). Every other
 * field (CPU ids, memory, topology, dynamic resources, and what later
 * versions add) is skipped by protobuf-c as an unknown field.
 *
 * libprotobuf-c is opened on first use (dlopen), not linked: only an
 * exporter on a Kubernetes node needs it.
 */
#ifndef MIGMON_PODRES_PROTO_H
#define MIGMON_PODRES_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "core/text.h"

/* The longest strings taken from the kubelet, in bytes: what Kubernetes
 * allows for each (text.h), so no valid name is cut. A pod's name is a DNS
 * subdomain (253), a namespace's and a container's a DNS label (63), a
 * resource name a qualified name (a DNS subdomain prefix, '/', a name of
 * 63). A device id has no such bound: every form podres_names reads is
 * under 100 bytes, so one longer than a pod's name names no device. */
#define PODRES_POD_MAX TEXT_NAME_MAX
#define PODRES_NAMESPACE_MAX TEXT_LABEL_MAX
#define PODRES_CONTAINER_MAX TEXT_LABEL_MAX
#define PODRES_RESOURCE_MAX (TEXT_NAME_MAX + 1 + TEXT_LABEL_MAX)
#define PODRES_ID_MAX TEXT_NAME_MAX

/* One device id a container holds. The strings are the list's: cut to the
 * lengths above on a character boundary and cleaned (text_take). */
struct podres_dev {
    const char *resource;  /* "nvidia.com/gpu", "nvidia.com/mig-1g.18gb" */
    const char *id;        /* as listed: "GPU-…", "MIG-…", "GPU-…::3" */
    const char *pod;       /* the pod's name */
    const char *ns;        /* its namespace */
    const char *container; /* the container's name */
};

/* The answer of one List call. Immutable once made; owned by whoever holds
 * it (podres.c counts references), freed with podres_list_free. */
struct podres_list {
    size_t n;
    struct podres_dev *dev;
    size_t npods;        /* pods in the answer, with devices or not */
    uint64_t listed_ns;  /* CLOCK_MONOTONIC when the answer came */
    unsigned refs;       /* podres.c's */
    char *pool;          /* every string above */
};

/* The largest answer taken, as gRPC's default receive limit: 4 MiB. */
#define PODRES_MAX_MESSAGE (4u << 20)

/* Open libprotobuf-c (once). 0, or -1 with why in err. */
int podres_proto_load(char *err, size_t errlen);

/* Decode a serialized ListPodResourcesResponse (len bytes at msg; len 0 is
 * the empty answer: no pods) into *out, a new list of every device id of
 * every container. 0, or -1 with why in err (libprotobuf-c missing, not a
 * valid message, out of memory). */
int podres_decode(const uint8_t *msg, size_t len, struct podres_list **out, char *err,
                  size_t errlen);

void podres_list_free(struct podres_list *l);

/* The one message of a gRPC response body: a 5-byte prefix (compressed
 * flag, big-endian length) and the message. 0 with *msg, *mlen set, or -1
 * with why in err (no prefix, compressed, length not what came, more than
 * one message, over PODRES_MAX_MESSAGE). */
int podres_grpc_unframe(const uint8_t *body, size_t len, const uint8_t **msg, size_t *mlen,
                        char *err, size_t errlen);

#endif

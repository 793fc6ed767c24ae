/*
 * podres_proto.c — the pod-resources List answer through protobuf-c's
 * generic descriptors (podres_proto.h).
 *
 * protoc-c would generate these descriptors from api.proto, but its output
 * calls into libprotobuf-c directly and takes the address of
 * protobuf_c_empty_string, so the binary would need the library at link
 * time. The descriptors are plain data in protobuf-c's public ABI
 * (libprotobuf-c.so.1, unchanged since 1.0; PROTOBUF_C_LABEL_NONE, proto3's
 * singular fields, since 1.3.0), so they are written here from api.proto's
 * field numbers and types, and the two calls that use them are taken from
 * the library when it is opened. message_init is NULL: the library then
 * initialises each message from its descriptor (message_init_generic,
 * there for descriptors not made by protoc-c).
 */
#include "system/podres_proto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "core/libpath.h"

/* The library's ABI name (Debian's libprotobuf-c1, Fedora's protobuf-c). */
#define PBC_SONAME "libprotobuf-c.so.1"
/* PROTOBUF_C_LABEL_NONE is understood from 1.3.0 on. */
#define PBC_MIN_VERSION 1003000u

static struct {
    __typeof__(protobuf_c_message_unpack) *unpack;
    __typeof__(protobuf_c_message_free_unpacked) *free_unpacked;
    __typeof__(protobuf_c_version_number) *version_number;
} pbc;
static bool pbc_ok;
static char pbc_err[400];
static pthread_once_t pbc_once = PTHREAD_ONCE_INIT;

static void pbc_load_once(void)
{
    char why[300];
    void *h = libpath_open(PBC_SONAME, NULL, 0, why, sizeof(why));
    if (!h) {
        snprintf(pbc_err, sizeof(pbc_err),
                 "pod labels need libprotobuf-c (%s); install it (Debian: libprotobuf-c1, "
                 "Fedora: protobuf-c)",
                 why);
        return;
    }
    void *u = dlsym(h, "protobuf_c_message_unpack");
    void *f = dlsym(h, "protobuf_c_message_free_unpacked");
    void *v = dlsym(h, "protobuf_c_version_number");
    if (!u || !f || !v) {
        snprintf(pbc_err, sizeof(pbc_err), "%s lacks protobuf_c_message_unpack", PBC_SONAME);
        dlclose(h);
        return;
    }
    /* POSIX guarantees function pointers round-trip through void *. */
    memcpy(&pbc.unpack, &u, sizeof(u));
    memcpy(&pbc.free_unpacked, &f, sizeof(f));
    memcpy(&pbc.version_number, &v, sizeof(v));
    uint32_t ver = pbc.version_number();
    if (ver < PBC_MIN_VERSION) {
        snprintf(pbc_err, sizeof(pbc_err), "pod labels need libprotobuf-c 1.3.0 or later (this "
                 "one is %u.%u.%u)", ver / 1000000, ver / 1000 % 1000, ver % 1000);
        dlclose(h);
        return;
    }
    pbc_ok = true;
}

int podres_proto_load(char *err, size_t errlen)
{
    pthread_once(&pbc_once, pbc_load_once);
    if (pbc_ok)
        return 0;
    snprintf(err, errlen, "%s", pbc_err);
    return -1;
}

/* ---- the messages ---------------------------------------------------------- */

/* The C layout protobuf-c fills: the base, then each declared field at the
 * offset its descriptor names; a repeated field is a size_t count and an
 * array. */
struct pb_devices { /* v1.ContainerDevices */
    ProtobufCMessage base;
    char *resource_name;
    size_t n_device_ids;
    char **device_ids;
};
struct pb_container { /* v1.ContainerResources */
    ProtobufCMessage base;
    char *name;
    size_t n_devices;
    struct pb_devices **devices;
};
struct pb_pod { /* v1.PodResources */
    ProtobufCMessage base;
    char *name;
    char *namespace_;
    size_t n_containers;
    struct pb_container **containers;
};
struct pb_list { /* v1.ListPodResourcesResponse */
    ProtobufCMessage base;
    size_t n_pod_resources;
    struct pb_pod **pod_resources;
};

#define FIELD(nm, num, lab, ty, q, st, mem, desc)                                               \
    {                                                                                          \
        .name = nm, .id = num, .label = PROTOBUF_C_LABEL_##lab, .type = PROTOBUF_C_TYPE_##ty,  \
        .quantifier_offset = q, .offset = offsetof(st, mem), .descriptor = desc,               \
    }
#define ONE(nm, num, ty, st, mem, desc) FIELD(nm, num, NONE, ty, 0, st, mem, desc)
#define MANY(nm, num, ty, st, n, mem, desc) \
    FIELD(nm, num, REPEATED, ty, offsetof(st, n), st, mem, desc)
/* Field numbers 1..n in one range; the sentinel holds the field count. */
#define RANGES(n) {{1, 0}, {0, n}}
#define MESSAGE(full, short_, st, flds, byname, ranges)                                     \
    {                                                                                      \
        .magic = PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC, .name = full, .short_name = short_, \
        .c_name = "V1__" short_, .package_name = "v1", .sizeof_message = sizeof(st),       \
        .n_fields = sizeof(flds) / sizeof(flds[0]), .fields = flds,                        \
        .fields_sorted_by_name = byname, .n_field_ranges = 1, .field_ranges = ranges,      \
    }

static const ProtobufCFieldDescriptor devices_fields[] = {
    ONE("resource_name", 1, STRING, struct pb_devices, resource_name, NULL),
    MANY("device_ids", 2, STRING, struct pb_devices, n_device_ids, device_ids, NULL),
};
static const unsigned devices_by_name[] = {1, 0};
static const ProtobufCIntRange devices_ranges[] = RANGES(2);
static const ProtobufCMessageDescriptor devices_desc =
    MESSAGE("v1.ContainerDevices", "ContainerDevices", struct pb_devices, devices_fields,
            devices_by_name, devices_ranges);

static const ProtobufCFieldDescriptor container_fields[] = {
    ONE("name", 1, STRING, struct pb_container, name, NULL),
    MANY("devices", 2, MESSAGE, struct pb_container, n_devices, devices, &devices_desc),
};
static const unsigned container_by_name[] = {1, 0};
static const ProtobufCIntRange container_ranges[] = RANGES(2);
static const ProtobufCMessageDescriptor container_desc =
    MESSAGE("v1.ContainerResources", "ContainerResources", struct pb_container, container_fields,
            container_by_name, container_ranges);

static const ProtobufCFieldDescriptor pod_fields[] = {
    ONE("name", 1, STRING, struct pb_pod, name, NULL),
    ONE("namespace", 2, STRING, struct pb_pod, namespace_, NULL),
    MANY("containers", 3, MESSAGE, struct pb_pod, n_containers, containers, &container_desc),
};
static const unsigned pod_by_name[] = {2, 0, 1};
static const ProtobufCIntRange pod_ranges[] = RANGES(3);
static const ProtobufCMessageDescriptor pod_desc = MESSAGE(
    "v1.PodResources", "PodResources", struct pb_pod, pod_fields, pod_by_name, pod_ranges);

static const ProtobufCFieldDescriptor list_fields[] = {
    MANY("pod_resources", 1, MESSAGE, struct pb_list, n_pod_resources, pod_resources, &pod_desc),
};
static const unsigned list_by_name[] = {0};
static const ProtobufCIntRange list_ranges[] = RANGES(1);
static const ProtobufCMessageDescriptor list_desc =
    MESSAGE("v1.ListPodResourcesResponse", "ListPodResourcesResponse", struct pb_list,
            list_fields, list_by_name, list_ranges);

/* ---- the flat list ----------------------------------------------------------- */

static const char *str_or_empty(const char *s)
{
    return s ? s : "";
}

/* The bytes s takes in the pool: cut to max on a character boundary, and
 * its NUL. */
static size_t pool_len(const char *s, size_t max)
{
    return text_utf8_cut(s, strlen(s), max) + 1;
}

/* Copy s into the pool at *at, cut to max bytes on a character boundary
 * and cleaned (text_take); returns the copy. */
static const char *pool_put(char **at, const char *s, size_t max)
{
    size_t n = pool_len(s, max);
    char *r = *at;
    text_take(r, n, s);
    *at += n;
    return r;
}

/* The flat list of m: every non-empty device id, with its resource, pod and
 * container. Each string is copied once (a pod's name once per pod), where
 * the kubelet's text enters the program: cut to the length Kubernetes
 * allows (podres_proto.h) and cleaned, so a label never carries a control
 * and an answer of one huge name does not make every scrape huge. */
static struct podres_list *flatten(const struct pb_list *m)
{
    size_t ndev = 0, bytes = 0;
    for (size_t p = 0; p < m->n_pod_resources; p++) {
        const struct pb_pod *pod = m->pod_resources[p];
        bytes += pool_len(str_or_empty(pod->name), PODRES_POD_MAX) +
                 pool_len(str_or_empty(pod->namespace_), PODRES_NAMESPACE_MAX);
        for (size_t c = 0; c < pod->n_containers; c++) {
            const struct pb_container *ct = pod->containers[c];
            bytes += pool_len(str_or_empty(ct->name), PODRES_CONTAINER_MAX);
            for (size_t d = 0; d < ct->n_devices; d++) {
                const struct pb_devices *dv = ct->devices[d];
                bytes += pool_len(str_or_empty(dv->resource_name), PODRES_RESOURCE_MAX);
                for (size_t i = 0; i < dv->n_device_ids; i++)
                    if (dv->device_ids[i] && dv->device_ids[i][0]) {
                        bytes += pool_len(dv->device_ids[i], PODRES_ID_MAX);
                        ndev++;
                    }
            }
        }
    }
    struct podres_list *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->pool = malloc(bytes ? bytes : 1);
    l->dev = calloc(ndev ? ndev : 1, sizeof(*l->dev));
    if (!l->pool || !l->dev) {
        podres_list_free(l);
        return NULL;
    }
    l->npods = m->n_pod_resources;
    char *at = l->pool;
    for (size_t p = 0; p < m->n_pod_resources; p++) {
        const struct pb_pod *pod = m->pod_resources[p];
        const char *pn = pool_put(&at, str_or_empty(pod->name), PODRES_POD_MAX);
        const char *ns = pool_put(&at, str_or_empty(pod->namespace_), PODRES_NAMESPACE_MAX);
        for (size_t c = 0; c < pod->n_containers; c++) {
            const struct pb_container *ct = pod->containers[c];
            const char *cn = pool_put(&at, str_or_empty(ct->name), PODRES_CONTAINER_MAX);
            for (size_t d = 0; d < ct->n_devices; d++) {
                const struct pb_devices *dv = ct->devices[d];
                const char *rn =
                    pool_put(&at, str_or_empty(dv->resource_name), PODRES_RESOURCE_MAX);
                for (size_t i = 0; i < dv->n_device_ids; i++) {
                    if (!dv->device_ids[i] || !dv->device_ids[i][0])
                        continue;
                    struct podres_dev *e = &l->dev[l->n++];
                    e->resource = rn;
                    e->id = pool_put(&at, dv->device_ids[i], PODRES_ID_MAX);
                    e->pod = pn;
                    e->ns = ns;
                    e->container = cn;
                }
            }
        }
    }
    return l;
}

int podres_decode(const uint8_t *msg, size_t len, struct podres_list **out, char *err,
                  size_t errlen)
{
    *out = NULL;
    if (podres_proto_load(err, errlen) != 0)
        return -1;
    if (len > PODRES_MAX_MESSAGE) {
        snprintf(err, errlen, "the answer is %zu bytes, over the %u taken", len,
                 PODRES_MAX_MESSAGE);
        return -1;
    }
    /* unpack takes no NULL buffer, even for the empty message */
    static const uint8_t none[1];
    ProtobufCMessage *m = pbc.unpack(&list_desc, NULL, len, len ? msg : none);
    if (!m) {
        snprintf(err, errlen, "the answer is not a ListPodResourcesResponse (%zu bytes that do "
                 "not decode)", len);
        return -1;
    }
    struct podres_list *l = flatten((const struct pb_list *)m);
    pbc.free_unpacked(m, NULL);
    if (!l) {
        snprintf(err, errlen, "out of memory for the pod list");
        return -1;
    }
    *out = l;
    return 0;
}

void podres_list_free(struct podres_list *l)
{
    if (!l)
        return;
    free(l->dev);
    free(l->pool);
    free(l);
}

int podres_grpc_unframe(const uint8_t *body, size_t len, const uint8_t **msg, size_t *mlen,
                        char *err, size_t errlen)
{
    if (len < 5) {
        if (len)
            snprintf(err, errlen, "the answer's gRPC message is cut short (%zu bytes)", len);
        else
            snprintf(err, errlen, "the answer has no gRPC message");
        return -1;
    }
    if (body[0] != 0) {
        if (body[0] == 1)
            snprintf(err, errlen, "the answer is compressed, which was not asked for");
        else
            snprintf(err, errlen, "the answer's gRPC message flag is %u, not 0", body[0]);
        return -1;
    }
    uint32_t n = (uint32_t)body[1] << 24 | (uint32_t)body[2] << 16 | (uint32_t)body[3] << 8 |
                 (uint32_t)body[4];
    if (n > PODRES_MAX_MESSAGE) {
        snprintf(err, errlen, "the answer is %u bytes, over the %u taken", n, PODRES_MAX_MESSAGE);
        return -1;
    }
    if ((size_t)n + 5 > len) {
        snprintf(err, errlen, "the answer's gRPC message is cut short (%zu of %u bytes)",
                 len - 5, n);
        return -1;
    }
    if ((size_t)n + 5 < len) {
        snprintf(err, errlen, "the answer has %zu bytes after its gRPC message", len - 5 - n);
        return -1;
    }
    *msg = body + 5;
    *mlen = n;
    return 0;
}

/* The kubelet's pod attribution (src/system/podres.c, podres_proto.c,
 * src/export/prom_pods.c): which device a listed id names (the "::N"
 * suffix, the MIG UUID forms), a hand-built List answer decoded (fields
 * the exporter does not read skipped), the gRPC framing, a device shared
 * by two pods, the labels on the page, the background cache without a
 * socket, and the pods of the kubelet's log directories on process series. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "export/prom.h"
#include "system/podres.h"

#define GPU0 "GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8"
#define MIG1 "MIG-760076c7-d3b3-392a-4dba-0e98392dab98"
#define GPU1 "GPU-4d8f2a6c-13e7-4b59-9c0a-7e2d5f8b1a36"

static struct device gpu(const char *uuid, int index)
{
    struct device d;
    memset(&d, 0, sizeof(d));
    d.kind = DEV_GPU;
    d.index = index;
    d.parent_pos = -1;
    d.gi_id = d.ci_id = -1;
    snprintf(d.uuid, sizeof(d.uuid), "%s", uuid);
    return d;
}

static struct device mig(const char *uuid, const char *parent, int gi, int ci)
{
    struct device d = gpu(uuid, 0);
    d.kind = DEV_MIG;
    d.parent_pos = 0;
    d.gi_id = gi;
    d.ci_id = ci;
    snprintf(d.parent_uuid, sizeof(d.parent_uuid), "%s", parent);
    return d;
}

static void test_names(void **state)
{
    (void)state;
    struct device g = gpu(GPU0, 0), m = mig(MIG1, GPU0, 1, 0), other = gpu(GPU1, 1);
    assert_true(podres_names(GPU0, &g));
    assert_false(podres_names(GPU0, &other));
    assert_false(podres_names(GPU0, &m)); /* a GPU id names the GPU, not its instances */
    /* the device plugin's replicas of a shared GPU: the suffix is no part of the id */
    assert_true(podres_names(GPU0 "::0", &g));
    assert_true(podres_names(GPU0 "::17", &g));
    assert_false(podres_names("::3", &g));
    /* NVML writes lower-case hex; an upper-case id is the same device */
    assert_true(podres_names("GPU-2E9B7C41-D85A-4F03-B6E2-91C7A4D0F5E8", &g));
    /* MIG UUIDs (R470 on) */
    assert_true(podres_names(MIG1, &m));
    assert_true(podres_names(MIG1 "::2", &m));
    assert_false(podres_names(MIG1, &g));
    assert_false(podres_names("MIG-760076c7", &m));
    /* the form of drivers before R470: MIG-<GPU UUID>/<GI>/<CI> */
    assert_true(podres_names("MIG-" GPU0 "/1/0", &m));
    assert_true(podres_names("MIG-" GPU0 "/1/0::1", &m));
    assert_false(podres_names("MIG-" GPU0 "/1/1", &m));
    assert_false(podres_names("MIG-" GPU0 "/2/0", &m));
    assert_false(podres_names("MIG-" GPU1 "/1/0", &m));
    assert_false(podres_names("MIG-" GPU0 "/1/0/x", &m));
    assert_false(podres_names("MIG-" GPU0 "/1", &m));
    assert_false(podres_names("MIG-" GPU0, &m));
    assert_false(podres_names("MIG-" GPU0 "/1/0", &g));
    /* a device whose UUID could not be read is named by nothing */
    struct device nouuid = mig("", GPU0, 1, 0);
    assert_false(podres_names("MIG-", &nouuid));
    assert_false(podres_names("", &nouuid));
    /* other vendors' ids, GKE's minor-number ids: not ours */
    assert_false(podres_names("nvidia0", &g));
    assert_false(podres_names("nvidia0/gi1", &m));
    assert_false(podres_names("fpga0", &g));
}

/* ---- protobuf by hand ---------------------------------------------------- */

struct pb {
    uint8_t b[4096];
    size_t n;
};

static void varint(struct pb *p, uint64_t v)
{
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        p->b[p->n++] = byte | (v ? 0x80 : 0);
    } while (v);
}

static void field_bytes(struct pb *p, unsigned num, const void *d, size_t n)
{
    varint(p, (uint64_t)num << 3 | 2);
    varint(p, n);
    memcpy(p->b + p->n, d, n);
    p->n += n;
}

static void field_str(struct pb *p, unsigned num, const char *s)
{
    field_bytes(p, num, s, strlen(s));
}

static void field_msg(struct pb *p, unsigned num, const struct pb *m)
{
    field_bytes(p, num, m->b, m->n);
}

static void field_int(struct pb *p, unsigned num, uint64_t v)
{
    varint(p, (uint64_t)num << 3 | 0);
    varint(p, v);
}

/* ContainerDevices{resource_name, device_ids..., topology{nodes{ID: 1}}} */
static void devices(struct pb *out, const char *resource, const char *const *ids)
{
    struct pb d = {0}, topo = {0}, node = {0};
    field_str(&d, 1, resource);
    for (; *ids; ids++)
        field_str(&d, 2, *ids);
    field_int(&node, 1, 1);
    field_msg(&topo, 1, &node);
    field_msg(&d, 3, &topo); /* not read: skipped */
    *out = d;
}

/* The answer of a node with three pods:
 *   serving/llm-0: container vllm holds MIG1 (nvidia.com/mig-3g.71gb)
 *     and the GPU's CPU ids 2, 3 (packed) and memory (both skipped);
 *   research/notebook: container jupyter holds GPU1::0 and GPU1::1;
 *     container sidecar holds nothing;
 *   default/fpga: an FPGA. */
static void answer(struct pb *list)
{
    memset(list, 0, sizeof(*list));
    struct pb pod = {0}, ct = {0}, dv = {0}, mem = {0};
    field_str(&pod, 1, "llm-0");
    field_str(&pod, 2, "serving");
    field_str(&ct, 1, "vllm");
    devices(&dv, "nvidia.com/mig-3g.71gb", (const char *const[]){MIG1, NULL});
    field_msg(&ct, 2, &dv);
    const uint8_t cpus[] = {2, 3};
    field_bytes(&ct, 3, cpus, sizeof(cpus));
    field_str(&mem, 1, "memory");
    field_int(&mem, 2, 1u << 30);
    field_msg(&ct, 4, &mem);
    field_msg(&pod, 3, &ct);
    field_msg(list, 1, &pod);

    memset(&pod, 0, sizeof(pod));
    memset(&ct, 0, sizeof(ct));
    field_str(&pod, 1, "notebook");
    field_str(&pod, 2, "research");
    field_str(&ct, 1, "jupyter");
    devices(&dv, "nvidia.com/gpu", (const char *const[]){GPU1 "::0", GPU1 "::1", "", NULL});
    field_msg(&ct, 2, &dv);
    field_msg(&pod, 3, &ct);
    memset(&ct, 0, sizeof(ct));
    field_str(&ct, 1, "sidecar");
    field_msg(&pod, 3, &ct);
    field_int(&pod, 4, 7); /* a pod-level field of newer kubelets: skipped */
    field_msg(list, 1, &pod);

    memset(&pod, 0, sizeof(pod));
    memset(&ct, 0, sizeof(ct));
    field_str(&pod, 1, "fpga");
    field_str(&pod, 2, "default");
    field_str(&ct, 1, "c");
    devices(&dv, "example.com/fpga", (const char *const[]){"fpga0", NULL});
    field_msg(&ct, 2, &dv);
    field_msg(&pod, 3, &ct);
    field_msg(list, 1, &pod);
}

static void test_decode(void **state)
{
    (void)state;
    struct pb m;
    answer(&m);
    struct podres_list *l = NULL;
    char err[400] = "";
    assert_int_equal(podres_decode(m.b, m.n, &l, err, sizeof(err)), 0);
    assert_non_null(l);
    assert_int_equal(l->npods, 3);
    assert_int_equal(l->n, 4); /* the empty id is not listed */
    const struct {
        const char *resource, *id, *pod, *ns, *container;
    } want[] = {
        {"nvidia.com/mig-3g.71gb", MIG1, "llm-0", "serving", "vllm"},
        {"nvidia.com/gpu", GPU1 "::0", "notebook", "research", "jupyter"},
        {"nvidia.com/gpu", GPU1 "::1", "notebook", "research", "jupyter"},
        {"example.com/fpga", "fpga0", "fpga", "default", "c"},
    };
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(l->dev[i].resource, want[i].resource);
        assert_string_equal(l->dev[i].id, want[i].id);
        assert_string_equal(l->dev[i].pod, want[i].pod);
        assert_string_equal(l->dev[i].ns, want[i].ns);
        assert_string_equal(l->dev[i].container, want[i].container);
    }
    /* who holds what */
    struct device g0 = gpu(GPU0, 0), m1 = mig(MIG1, GPU0, 1, 0), g1 = gpu(GPU1, 1);
    bool shared = true;
    const struct podres_dev *h = podres_holder(l, &m1, &shared);
    assert_non_null(h);
    assert_false(shared);
    assert_string_equal(h->pod, "llm-0");
    /* two replicas of GPU1 in one container: it holds the GPU */
    h = podres_holder(l, &g1, &shared);
    assert_non_null(h);
    assert_string_equal(h->container, "jupyter");
    assert_null(podres_holder(l, &g0, &shared));
    assert_false(shared);
    assert_null(podres_holder(NULL, &g0, &shared));
    podres_list_free(l);

    /* the empty answer: no pods */
    assert_int_equal(podres_decode(NULL, 0, &l, err, sizeof(err)), 0);
    assert_int_equal(l->npods, 0);
    assert_int_equal(l->n, 0);
    podres_list_free(l);

    /* bytes that are not the message: a string field cut short, a
     * length past the end, a field of wire type 7 */
    const uint8_t bad1[] = {0x0a, 0x10, 'x'};
    const uint8_t bad2[] = {0x0a, 0x03, 0x0a, 0x05, 'a'};
    const uint8_t bad3[] = {0x0f, 0x00};
    const struct {
        const uint8_t *b;
        size_t n;
    } bads[] = {{bad1, sizeof(bad1)}, {bad2, sizeof(bad2)}, {bad3, sizeof(bad3)}};
    for (size_t i = 0; i < 3; i++) {
        err[0] = '\0';
        l = (struct podres_list *)1;
        assert_int_equal(podres_decode(bads[i].b, bads[i].n, &l, err, sizeof(err)), -1);
        assert_null(l);
        assert_non_null(strstr(err, "not a ListPodResourcesResponse"));
    }
}

/* The kubelet's text enters here: cleaned (text.h) and cut to what
 * Kubernetes allows, on a character boundary. */
static void test_decode_cleans_and_cuts(void **state)
{
    (void)state;
    char name[301], ctn[65], res[401];
    memset(name, 'p', 300);
    name[300] = '\0';
    memset(ctn, 'c', 62);
    memcpy(ctn + 62, "\xc3\xa9", 3); /* 'é' across the 63rd byte */
    memset(res, 'r', 400);
    res[400] = '\0';
    struct pb list = {0}, pod = {0}, ct = {0}, dv = {0};
    field_str(&pod, 1, name);
    field_str(&pod, 2, "ser\033]0;x\007ving\xc2\x9b\xe2\x80\xae\xe2\x80\x8f");
    field_str(&ct, 1, ctn);
    devices(&dv, res, (const char *const[]){GPU0 "\xef\xbb\xbf", NULL});
    field_msg(&ct, 2, &dv);
    field_msg(&pod, 3, &ct);
    field_msg(&list, 1, &pod);
    struct podres_list *l = NULL;
    char err[200];
    assert_int_equal(podres_decode(list.b, list.n, &l, err, sizeof(err)), 0);
    assert_int_equal(l->n, 1);
    const struct podres_dev *e = &l->dev[0];
    assert_int_equal(strlen(e->pod), PODRES_POD_MAX);
    assert_int_equal(strspn(e->pod, "p"), 253);
    assert_string_equal(e->ns, "ser?]0;x?ving????????");
    assert_int_equal(strlen(e->container), 62); /* the 'é' goes whole */
    assert_int_equal(strlen(e->resource), PODRES_RESOURCE_MAX);
    assert_int_equal(PODRES_RESOURCE_MAX, 317);
    assert_string_equal(e->id, GPU0 "???");
    podres_list_free(l);
}

static void test_shared(void **state)
{
    (void)state;
    /* time slicing: replicas of one GPU in two pods; its values cannot be
     * split among them, so neither is named */
    struct pb list = {0}, pod = {0}, ct = {0}, dv = {0};
    for (int k = 0; k < 2; k++) {
        memset(&pod, 0, sizeof(pod));
        memset(&ct, 0, sizeof(ct));
        field_str(&pod, 1, k ? "b" : "a");
        field_str(&pod, 2, "ns");
        field_str(&ct, 1, "c");
        devices(&dv, "nvidia.com/gpu", (const char *const[]){k ? GPU0 "::1" : GPU0 "::0", NULL});
        field_msg(&ct, 2, &dv);
        field_msg(&pod, 3, &ct);
        field_msg(&list, 1, &pod);
    }
    struct podres_list *l;
    char err[200];
    assert_int_equal(podres_decode(list.b, list.n, &l, err, sizeof(err)), 0);
    struct device g = gpu(GPU0, 0);
    bool shared = false;
    assert_null(podres_holder(l, &g, &shared));
    assert_true(shared);
    podres_list_free(l);
}

static void test_unframe(void **state)
{
    (void)state;
    const uint8_t *msg;
    size_t n;
    char err[200];
    const uint8_t ok[] = {0, 0, 0, 0, 3, 'a', 'b', 'c'};
    assert_int_equal(podres_grpc_unframe(ok, sizeof(ok), &msg, &n, err, sizeof(err)), 0);
    assert_int_equal(n, 3);
    assert_ptr_equal(msg, ok + 5);
    const uint8_t empty[] = {0, 0, 0, 0, 0};
    assert_int_equal(podres_grpc_unframe(empty, 5, &msg, &n, err, sizeof(err)), 0);
    assert_int_equal(n, 0);
    assert_int_equal(podres_grpc_unframe(ok, 0, &msg, &n, err, sizeof(err)), -1);
    assert_string_equal(err, "the answer has no gRPC message");
    assert_int_equal(podres_grpc_unframe(ok, 4, &msg, &n, err, sizeof(err)), -1);
    assert_string_equal(err, "the answer's gRPC message is cut short (4 bytes)");
    assert_int_equal(podres_grpc_unframe(ok, 7, &msg, &n, err, sizeof(err)), -1);
    assert_string_equal(err, "the answer's gRPC message is cut short (2 of 3 bytes)");
    const uint8_t two[] = {0, 0, 0, 0, 1, 'a', 0, 0, 0, 0, 0};
    assert_int_equal(podres_grpc_unframe(two, sizeof(two), &msg, &n, err, sizeof(err)), -1);
    assert_string_equal(err, "the answer has 5 bytes after its gRPC message");
    const uint8_t gz[] = {1, 0, 0, 0, 0};
    assert_int_equal(podres_grpc_unframe(gz, 5, &msg, &n, err, sizeof(err)), -1);
    assert_string_equal(err, "the answer is compressed, which was not asked for");
    const uint8_t big[] = {0, 0x7f, 0xff, 0xff, 0xff};
    assert_int_equal(podres_grpc_unframe(big, 5, &msg, &n, err, sizeof(err)), -1);
    assert_string_equal(err, "the answer is 2147483647 bytes, over the 4194304 taken");
}

/* ---- the labels on the page ------------------------------------------------ */

/* GPU 0 in MIG mode with MIG1 (GI 1) and another instance (GI 2), and
 * GPU 1 (MIG off). */
static void make_snapshot(struct snapshot *s)
{
    memset(s, 0, sizeof(*s));
    assert_int_equal(snapshot_reserve(s, 4), 0);
    s->ndevices = 4;
    s->gpu_ok = true;
    s->devices[0] = gpu(GPU0, 0);
    s->devices[0].mig_enabled = true;
    s->devices[1] = mig(MIG1, GPU0, 1, 0);
    s->devices[2] = mig("MIG-0000aaaa-0000-0000-0000-000000000002", GPU0, 2, 0);
    s->devices[3] = gpu(GPU1, 1);
    s->devices[3].parent_pos = -1;
    for (size_t i = 0; i < 4; i++) {
        struct device *d = &s->devices[i];
        snprintf(d->name, sizeof(d->name), "NVIDIA H200");
        if (d->kind == DEV_MIG)
            snprintf(d->profile, sizeof(d->profile), "3g.71gb");
        for (int k = 0; k < M_COUNT; k++)
            d->m[k] = metric_none("NVML_ERROR_NOT_SUPPORTED");
        d->m[M_MEM_USED] = metric_direct(1048576);
        d->m[M_MEM_TOTAL] = metric_direct(4.0 * 1048576);
        d->process_count = metric_direct(0);
    }
}

static void test_labels(void **state)
{
    (void)state;
    struct snapshot s;
    make_snapshot(&s);
    struct pb m;
    answer(&m);
    struct podres_list *l;
    char err[200];
    assert_int_equal(podres_decode(m.b, m.n, &l, err, sizeof(err)), 0);
    struct prom_buf b = {0};
    struct prom_opts o = {.dcgm = true, .pods = l};
    assert_int_equal(prom_render(&b, &s, &o), 0);
    const char *page = b.p;
    /* MIG1's series, migmon_ and DCGM_FI_ */
    assert_non_null(strstr(page, "mig_uuid=\"" MIG1 "\",pod=\"llm-0\",namespace=\"serving\","
                                 "container=\"vllm\",mig_index=\"0\"} 1\n"));
    assert_non_null(strstr(page, "migmon_mig_memory_used_bytes{gpu=\"0\",uuid=\"" GPU0 "\""));
    assert_non_null(strstr(page, "GPU_I_ID=\"1\",pod=\"llm-0\",namespace=\"serving\","
                                 "container=\"vllm\"} 1\n"));
    /* GPU 1, held by the notebook's jupyter container */
    assert_non_null(strstr(page, "migmon_gpu_memory_used_bytes{gpu=\"1\",uuid=\"" GPU1 "\","
                                 "pci_bus_id=\"\",model=\"NVIDIA H200\",pod=\"notebook\","
                                 "namespace=\"research\",container=\"jupyter\",source=\"direct\"}"));
    assert_non_null(strstr(page, "DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"" GPU1 "\""));
    /* the node's pods: the two named on devices whose memory is on the page */
    assert_non_null(strstr(page, "\nmigmon_node_pods 2\n"));
    /* every pod label belongs to one of the two held devices: GI 2 and
     * GPU 0 itself have none */
    size_t held = 0, lines = 0;
    for (const char *p = page; (p = strstr(p, "pod=\"")); p++) {
        const char *bol = p;
        while (bol > page && bol[-1] != '\n')
            bol--;
        const char *eol = strchr(p, '\n');
        char line[1024];
        snprintf(line, sizeof(line), "%.*s", (int)(eol - bol), bol);
        assert_true(strstr(line, MIG1) || strstr(line, "GPU_I_ID=\"1\"") ||
                    strstr(line, "gpu=\"1\""));
        assert_null(strstr(line, "gpu_instance_id=\"2\""));
        held++;
    }
    for (const char *p = page; (p = strchr(p, '\n')); p++)
        lines++;
    assert_true(held > 10);
    assert_true(lines > held);
    /* without the list: no pod label anywhere */
    o.pods = NULL;
    assert_int_equal(prom_render(&b, &s, &o), 0);
    assert_null(strstr(b.p, "pod=\""));
    assert_null(strstr(b.p, "namespace=\""));
    prom_buf_free(&b);
    podres_list_free(l);
    snapshot_free(&s);
}

/* ---- the cache without a kubelet ------------------------------------------- */

static void test_no_socket(void **state)
{
    (void)state;
    char dir[] = "/tmp/migmon-podres-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[100];
    snprintf(path, sizeof(path), "%s/kubelet.sock", dir);
    char *logbuf = NULL;
    size_t loglen = 0;
    FILE *log = open_memstream(&logbuf, &loglen);
    struct podres *pr;
    char err[200];
    struct podres_opts o = {.socket = path, .refresh_ms = 100, .log = log};
    assert_int_equal(podres_start(&pr, &o, err, sizeof(err)), 0);
    /* a few refreshes: said once */
    struct timespec ts = {0, 450 * 1000000L};
    nanosleep(&ts, NULL);
    char health[600];
    podres_health(pr, health, sizeof(health));
    assert_null(podres_acquire(pr));
    podres_stop(pr);
    fclose(log);
    char want[400];
    snprintf(want, sizeof(want), "kubelet: %s: no socket there (No such file or directory) (for ",
             path);
    assert_memory_equal(health, want, strlen(want));
    assert_non_null(strstr(health, "); no pod labels"));
    snprintf(want, sizeof(want),
             "mig-gpu-mon: kubelet: %s: no socket there (No such file or directory); no pod "
             "labels until it answers (--kubelet-socket off: not asked)\n",
             path);
    assert_string_equal(logbuf, want);
    free(logbuf);

    /* a socket file nothing listens on (a kubelet that died) */
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    assert_true(strlen(path) < sizeof(a.sun_path));
    memcpy(a.sun_path, path, strlen(path) + 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    close(fd);
    struct podres_list *l = (struct podres_list *)1;
    assert_int_equal(podres_call(path, 500, -1, &l, err, sizeof(err)), -1);
    assert_null(l);
    assert_string_equal(err, "nothing listens on the socket (connection refused)");
    /* a socket that takes the connection and never answers: the deadline */
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    unlink(path);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(fd, 4), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(podres_call(path, 200, -1, &l, err, sizeof(err)), -1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    assert_string_equal(err, "no answer within 200 ms");
    assert_true(ms >= 190 && ms < 1000);
    close(fd);
    unlink(path);
    rmdir(dir);
}

/* ---- the kubelet's log directories ------------------------------------------ */

static void test_logs(void **state)
{
    (void)state;
    char dir[] = "/tmp/migmon-podlogs-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *const names[] = {
        "research_notebook_3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", /* taken */
        "kube-system_coredns-7db6d8ff4d-x2x9z_0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", /* taken */
        "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4e",           /* the form before 1.14: no names */
        "a_b_c_0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4f",     /* three '_' */
        "Upper_case_0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c50", /* not a DNS label */
        "ns_pod_not-a-uid",
        "ns__0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c51",       /* no name */
    };
    char path[256];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        assert_int_equal(mkdir(path, 0755), 0);
    }
    snprintf(path, sizeof(path), "%s/ns_file_0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c52", dir);
    FILE *f = fopen(path, "w"); /* a file, not a directory */
    assert_non_null(f);
    fclose(f);
    struct podres_list *l = NULL;
    assert_int_equal(podres_scan_logs(dir, &l), 0);
    assert_int_equal(l->n, 2);
    const struct podres_dev *p = podres_pod_of(l, "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d");
    assert_non_null(p);
    assert_string_equal(p->pod, "notebook");
    assert_string_equal(p->ns, "research");
    p = podres_pod_of(l, "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d");
    assert_non_null(p);
    assert_string_equal(p->pod, "coredns-7db6d8ff4d-x2x9z");
    assert_string_equal(p->ns, "kube-system");
    assert_null(podres_pod_of(l, "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4e"));
    assert_null(podres_pod_of(l, ""));
    assert_null(podres_pod_of(NULL, "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"));

    /* on the page: a process of that pod, on a device held by another pod */
    struct snapshot s;
    make_snapshot(&s);
    assert_int_equal(snapshot_reserve_procs(&s, 1), 0);
    struct gpu_process *gp = &s.procs[0];
    memset(gp, 0, sizeof(*gp));
    gp->pid = 7102;
    gp->mem_bytes = metric_direct(4096);
    gp->sm_util = gp->mem_util = gp->cpu_pct = gp->rss_bytes = metric_none(NULL);
    snprintf(gp->container, sizeof(gp->container),
             "k8s:3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d/containerd:abababababab");
    s.nprocs = 1;
    s.devices[1].proc_first = 0;
    s.devices[1].nprocs = 1;
    struct pb m;
    answer(&m);
    struct podres_list *pods;
    char err[200];
    assert_int_equal(podres_decode(m.b, m.n, &pods, err, sizeof(err)), 0);
    struct prom_buf b = {0};
    struct prom_opts o = {.processes = true, .pods = pods, .pod_logs = l};
    assert_int_equal(prom_render(&b, &s, &o), 0);
    assert_non_null(strstr(b.p, "migmon_process_gpu_memory_bytes{gpu=\"0\",uuid=\"" GPU0 "\","
                                "pci_bus_id=\"\",model=\"NVIDIA H200\",gpu_instance_id=\"1\","
                                "compute_instance_id=\"0\",mig_profile=\"3g.71gb\",mig_uuid=\"" MIG1
                                "\",pid=\"7102\",pod_uid=\"3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d\","
                                "pod=\"notebook\",namespace=\"research\","
                                "container=\"containerd:abababababab\",source=\"direct\"} 4096\n"));
    /* the device itself is the LLM's */
    assert_non_null(strstr(b.p, "mig_uuid=\"" MIG1 "\",pod=\"llm-0\",namespace=\"serving\","
                                "container=\"vllm\",mig_index=\"0\"} 1\n"));
    /* without the log directories the process has its UID only */
    o.pod_logs = NULL;
    assert_int_equal(prom_render(&b, &s, &o), 0);
    assert_non_null(strstr(b.p, "pod_uid=\"3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d\","
                                "container=\"containerd:abababababab\",source=\"direct\"} 4096\n"));
    prom_buf_free(&b);
    podres_list_free(pods);
    podres_list_free(l);
    snapshot_free(&s);

    assert_int_equal(podres_scan_logs("/nonexistent-migmon", &l), -ENOENT);
    assert_null(l);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        rmdir(path);
    }
    snprintf(path, sizeof(path), "%s/ns_file_0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c52", dir);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),    cmocka_unit_test(test_decode),
        cmocka_unit_test(test_decode_cleans_and_cuts),
        cmocka_unit_test(test_shared),   cmocka_unit_test(test_unframe),
        cmocka_unit_test(test_labels),   cmocka_unit_test(test_no_socket),
        cmocka_unit_test(test_logs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Each health event of a snapshot stream once (src/engine/eventlog.c): a ring
 * that overflows between two snapshots, a GPU that is lost, the events
 * helper restarted, the count started again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backend/nvml/nvml_api.h"
#include "engine/eventlog.h"

#define RING 64

/* What the events client keeps: a ring of the last 64 and the count, and
 * a snapshot filled from it as events_apply fills one. */
struct source {
    struct gpu_event ring[RING];
    uint64_t total;
};

static void add(struct source *r, unsigned xid, int device_pos)
{
    struct gpu_event e;
    memset(&e, 0, sizeof(e));
    e.elapsed_ns = 1000000ull * (r->total + 1);
    e.wall_ns = 1700000000000000000ll + (int64_t)e.elapsed_ns;
    snprintf(e.gpu_uuid, sizeof(e.gpu_uuid), "GPU-1");
    e.device_pos = device_pos;
    e.gi_id = e.ci_id = -1;
    e.xid = xid;
    e.type = NVML_EVENT_TYPE_XID;
    r->ring[r->total % RING] = e;
    r->total++;
}

static struct gpu_event buf[RING];

static void fill(const struct source *r, struct snapshot *s)
{
    size_t n = r->total < RING ? (size_t)r->total : RING;
    for (size_t k = 0; k < n; k++)
        buf[k] = r->ring[(r->total - n + k) % RING];
    memset(s, 0, sizeof(*s));
    s->events = buf;
    s->nevents = n;
    s->events_total = r->total;
}

/* The Xids of a batch, "1,2,3". */
static const char *xids(const struct eventlog_batch *b)
{
    static char out[1024];
    size_t off = 0;
    out[0] = '\0';
    for (size_t i = 0; i < b->n && off < sizeof(out); i++)
        off += (size_t)snprintf(out + off, sizeof(out) - off, "%s%u", i ? "," : "", b->ev[i].xid);
    return out;
}

static void test_each_once(void **state)
{
    (void)state;
    struct source r = {0};
    struct eventlog l;
    struct eventlog_batch b;
    struct snapshot s;
    eventlog_init(&l);
    fill(&r, &s);
    eventlog_take(&l, &s, &b);
    assert_int_equal(b.n, 0);
    assert_int_equal(b.dropped, 0);
    add(&r, 43, 0);
    add(&r, 31, 0);
    fill(&r, &s);
    eventlog_take(&l, &s, &b);
    assert_string_equal(xids(&b), "43,31");
    assert_int_equal(b.dropped, 0);
    assert_false(b.restarted);
    /* the same snapshot again (--trigger stdin), and the next with nothing new */
    eventlog_take(&l, &s, &b);
    assert_int_equal(b.n, 0);
    fill(&r, &s);
    eventlog_take(&l, &s, &b);
    assert_int_equal(b.n, 0);
    add(&r, 94, 0);
    fill(&r, &s);
    eventlog_take(&l, &s, &b);
    assert_string_equal(xids(&b), "94");
    assert_int_equal(b.ev[0].elapsed_ns, 3000000);
}

/* More than the ring holds between two snapshots: the newest 64 are
 * handed out, the rest counted, none made up. */
static void test_ring_overflow(void **state)
{
    (void)state;
    struct source r = {0};
    struct eventlog l;
    struct eventlog_batch b;
    struct snapshot s;
    eventlog_init(&l);
    for (unsigned i = 1; i <= 10; i++)
        add(&r, i, 0);
    fill(&r, &s);
    eventlog_take(&l, &s, &b);
    assert_int_equal(b.n, 10);
    for (unsigned i = 11; i <= 110; i++)
        add(&r, i, 0);
    fill(&r, &s);
    eventlog_take(&l, &s, &b);
    assert_int_equal(b.n, 64);
    assert_int_equal(b.dropped, 36);
    assert_int_equal(b.ev[0].xid, 47);
    assert_int_equal(b.ev[63].xid, 110);
    assert_false(b.restarted);
    /* exactly a ring's worth: none lost */
    for (unsigned i = 111; i <= 174; i++)
        add(&r, i, 0);
    fill(&r, &s);
    eventlog_take(&l, &s, &b);
    assert_int_equal(b.n, 64);
    assert_int_equal(b.dropped, 0);
    assert_int_equal(b.ev[0].xid, 111);
    /* the first snapshot of a stream already past the ring */
    struct source r2 = {0};
    for (unsigned i = 1; i <= 70; i++)
        add(&r2, i, 0);
    fill(&r2, &s);
    eventlog_all(&s, &b);
    assert_int_equal(b.n, 64);
    assert_int_equal(b.dropped, 6);
    assert_int_equal(b.ev[0].xid, 7);
}

/* A ring shorter than the count says (the snapshot could not grow its
 * array): what it holds is the newest; the rest is counted as dropped. */
static void test_short_ring(void **state)
{
    (void)state;
    struct source r = {0};
    struct snapshot s;
    struct eventlog_batch b;
    for (unsigned i = 1; i <= 10; i++)
        add(&r, i, 0);
    fill(&r, &s);
    s.events += 6;
    s.nevents = 4;
    eventlog_all(&s, &b);
    assert_string_equal(xids(&b), "7,8,9,10");
    assert_int_equal(b.dropped, 6);
    /* no array at all */
    s.events = NULL;
    s.nevents = 0;
    eventlog_all(&s, &b);
    assert_int_equal(b.n, 0);
    assert_null(b.ev);
    assert_int_equal(b.dropped, 10);
}

/* A GPU that falls off the bus: its Xid 79 comes with it still in the
 * snapshot, then it is gone (device_pos -1): nothing is handed out again,
 * and a later event of the absent GPU is handed out once, where unknown. */
static void test_gpu_lost(void **state)
{
    (void)state;
    struct device dev;
    memset(&dev, 0, sizeof(dev));
    dev.kind = DEV_GPU;
    dev.index = 5;
    dev.mig_index = dev.parent_pos = -1;
    snprintf(dev.uuid, sizeof(dev.uuid), "GPU-1");
    struct source r = {0};
    struct eventlog l;
    struct eventlog_batch b;
    struct snapshot s;
    struct eventlog_place p;
    char where[128];
    eventlog_init(&l);
    add(&r, 79, 0);
    fill(&r, &s);
    s.devices = &dev;
    s.ndevices = 1;
    eventlog_take(&l, &s, &b);
    assert_string_equal(xids(&b), "79");
    eventlog_place(&s, &b.ev[0], &p);
    eventlog_where(where, sizeof(where), &b.ev[0], &p);
    assert_string_equal(where, "GPU 5");
    assert_string_equal(p.device, "GPU-1");
    /* gone from the snapshot: the ring's events now point nowhere */
    for (unsigned k = 0; k < RING; k++)
        r.ring[k].device_pos = -1;
    fill(&r, &s);
    eventlog_take(&l, &s, &b);
    assert_int_equal(b.n, 0);
    add(&r, 79, -1);
    fill(&r, &s);
    eventlog_take(&l, &s, &b);
    assert_int_equal(b.n, 1);
    eventlog_place(&s, &b.ev[0], &p);
    assert_int_equal(p.gpu, -1);
    assert_string_equal(p.device, "");
    eventlog_where(where, sizeof(where), &b.ev[0], &p);
    assert_string_equal(where, "GPU GPU-1 (not present)");
}

/* The events helper restarted: the client keeps its ring and count, and
 * says why there are none meanwhile; what came before is not handed out
 * again, what comes after is. */
static void test_helper_restart(void **state)
{
    (void)state;
    struct source r = {0};
    struct eventlog l;
    struct eventlog_batch b;
    struct snapshot s;
    eventlog_init(&l);
    add(&r, 13, 0);
    add(&r, 43, 0);
    fill(&r, &s);
    eventlog_take(&l, &s, &b);
    assert_int_equal(b.n, 2);
    for (int i = 0; i < 3; i++) {
        fill(&r, &s);
        s.events_why = "events helper exited; restarting it";
        eventlog_take(&l, &s, &b);
        assert_int_equal(b.n, 0);
        assert_int_equal(b.dropped, 0);
    }
    add(&r, 45, 0);
    fill(&r, &s);
    eventlog_take(&l, &s, &b);
    assert_string_equal(xids(&b), "45");
    assert_false(b.restarted);
}

/* A new events client (a new collector) counts from 0 again: the count
 * going back, or the ring no longer holding the last event handed out
 * where the count puts it, is a new sequence whose events are all new. */
static void test_count_restarted(void **state)
{
    (void)state;
    struct source r = {0};
    struct eventlog l;
    struct eventlog_batch b;
    struct snapshot s;
    eventlog_init(&l);
    for (unsigned i = 1; i <= 5; i++)
        add(&r, i, 0);
    fill(&r, &s);
    eventlog_take(&l, &s, &b);
    assert_int_equal(b.n, 5);
    struct source r2 = {0};
    add(&r2, 100, 0);
    add(&r2, 101, 0);
    fill(&r2, &s);
    eventlog_take(&l, &s, &b);
    assert_true(b.restarted);
    assert_string_equal(xids(&b), "100,101");
    assert_int_equal(b.dropped, 0);
    /* grown back past the old count, the old last event not where it was */
    struct source r3 = {0};
    for (unsigned i = 200; i < 204; i++)
        add(&r3, i, 0);
    fill(&r3, &s);
    eventlog_take(&l, &s, &b);
    assert_true(b.restarted);
    assert_string_equal(xids(&b), "200,201,202,203");
    /* and it goes on from there */
    add(&r3, 204, 0);
    fill(&r3, &s);
    eventlog_take(&l, &s, &b);
    assert_false(b.restarted);
    assert_string_equal(xids(&b), "204");
    /* the same event at another place in a later snapshot is the same event */
    for (unsigned k = 0; k < RING; k++)
        r3.ring[k].device_pos = 3;
    fill(&r3, &s);
    eventlog_take(&l, &s, &b);
    assert_false(b.restarted);
    assert_int_equal(b.n, 0);
}

static void test_words(void **state)
{
    (void)state;
    struct device dev[2];
    memset(dev, 0, sizeof(dev));
    dev[0].kind = DEV_GPU;
    dev[0].mig_index = dev[0].parent_pos = -1;
    dev[1].kind = DEV_MIG;
    dev[1].mig_index = 2;
    dev[1].parent_pos = 0;
    dev[1].gi_id = 3;
    dev[1].ci_id = 0;
    snprintf(dev[1].profile, sizeof(dev[1].profile), "1g.18gb");
    snprintf(dev[1].uuid, sizeof(dev[1].uuid), "MIG-2");
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    s.devices = dev;
    s.ndevices = 2;
    struct gpu_event e;
    memset(&e, 0, sizeof(e));
    e.type = NVML_EVENT_TYPE_XID;
    e.xid = 43;
    e.device_pos = 1;
    e.gi_id = 3;
    e.ci_id = 0;
    char what[64], where[128];
    struct eventlog_place p;
    eventlog_what(what, sizeof(what), &e);
    assert_string_equal(what, "Xid 43");
    eventlog_place(&s, &e, &p);
    eventlog_where(where, sizeof(where), &e, &p);
    assert_string_equal(where, "MIG 0/2 1g.18gb GI 3 CI 0"); /* the monitor's one name */
    assert_true(p.mig);
    assert_string_equal(p.device, "MIG-2");
    /* an instance the snapshot does not have: the GPU, with the ids */
    e.device_pos = 0;
    eventlog_place(&s, &e, &p);
    eventlog_where(where, sizeof(where), &e, &p);
    assert_string_equal(where, "GPU 0 (GI 3, CI 0)");
    e.type = NVML_EVENT_TYPE_DOUBLE_BIT_ECC;
    e.xid = 0;
    assert_false(eventlog_is_xid(&e));
    eventlog_what(what, sizeof(what), &e);
    assert_string_equal(what, "double-bit ECC error");
    e.type = NVML_EVENT_TYPE_SINGLE_BIT_ECC;
    eventlog_what(what, sizeof(what), &e);
    assert_string_equal(what, "single-bit ECC error");
    /* a UUID as the helper read it is printed clean */
    e.device_pos = -1;
    snprintf(e.gpu_uuid, sizeof(e.gpu_uuid), "GPU-\x1b[2J");
    eventlog_place(&s, &e, &p);
    eventlog_where(where, sizeof(where), &e, &p);
    assert_string_equal(where, "GPU GPU-?[2J (not present)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_once),       cmocka_unit_test(test_ring_overflow),
        cmocka_unit_test(test_short_ring),      cmocka_unit_test(test_gpu_lost),
        cmocka_unit_test(test_helper_restart),  cmocka_unit_test(test_count_restarted),
        cmocka_unit_test(test_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

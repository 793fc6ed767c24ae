/* Unit tests for src/tui/health_ui.c: the device row's health mark per
 * level, the header's summary, the events overlay's text and the
 * durations they write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "backend/nvml/nvml_api.h"
#include "core/health_rules.h"
#include "tui/health_ui.h"

static struct device devs[8];

/* GPU 0 with two MIG instances (slots 0 and 1), GPU 1, GPU 2. */
static void make_tree(struct snapshot *s)
{
    memset(s, 0, sizeof(*s));
    memset(devs, 0, sizeof(devs));
    static const struct {
        enum device_kind kind;
        int index, mig, parent;
        const char *profile;
    } t[] = {{DEV_GPU, 0, -1, -1, ""},
             {DEV_MIG, 0, 0, 0, "3g.71gb"},
             {DEV_MIG, 0, 1, 0, "2g.35gb"},
             {DEV_GPU, 1, -1, -1, ""},
             {DEV_GPU, 2, -1, -1, ""}};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        devs[i].kind = t[i].kind;
        devs[i].index = t[i].index;
        devs[i].mig_index = t[i].mig;
        devs[i].parent_pos = t[i].parent;
        devs[i].gi_id = devs[i].ci_id = -1;
        snprintf(devs[i].profile, sizeof(devs[i].profile), "%s", t[i].profile);
        devs[i].health = HEALTH_OK;
    }
    s->devices = devs;
    s->ndevices = s->cap = 5;
    s->gpu_ok = true;
}

static void test_mark_per_level(void **state)
{
    (void)state;
    enum tui_role role = R_COUNT;
    assert_string_equal(tui_health_mark(HEALTH_UNKNOWN, &role), "");
    assert_int_equal(role, R_NORMAL);
    assert_string_equal(tui_health_mark(HEALTH_OK, &role), "");
    assert_int_equal(role, R_NORMAL);
    assert_string_equal(tui_health_mark(HEALTH_WARNING, &role), "!");
    assert_int_equal(role, R_WARN);
    assert_string_equal(tui_health_mark(HEALTH_ACTION, &role), "!!");
    assert_int_equal(role, R_ALARM);
    assert_string_equal(tui_health_mark(HEALTH_ACTION, NULL), "!!");
    assert_string_equal(tui_health_mark(77, &role), ""); /* not a level */
}

static void test_summary(void **state)
{
    (void)state;
    struct snapshot s;
    char out[96];
    enum tui_role role = R_COUNT;
    make_tree(&s);
    devs[4].health = HEALTH_UNKNOWN; /* unknown is not summed */
    assert_false(tui_health_summary(out, sizeof(out), &s, TUI_HEALTH_FULL, &role));
    assert_string_equal(out, "");
    /* an instance's warning is its GPU's: one GPU, not two devices */
    devs[2].health = HEALTH_WARNING;
    assert_true(tui_health_summary(out, sizeof(out), &s, TUI_HEALTH_FULL, &role));
    assert_string_equal(out, "GPU health: 1 warning (e: events)");
    assert_int_equal(role, R_WARN);
    assert_true(tui_health_summary(out, sizeof(out), &s, TUI_HEALTH_TINY, &role));
    assert_string_equal(out, "health !");
    devs[0].health = HEALTH_WARNING; /* the GPU as well: still one */
    assert_true(tui_health_summary(out, sizeof(out), &s, TUI_HEALTH_FULL, &role));
    assert_string_equal(out, "GPU health: 1 warning (e: events)");
    /* GPU 1 needs action; an instance's action makes GPU 0's too */
    devs[3].health = HEALTH_ACTION;
    assert_true(tui_health_summary(out, sizeof(out), &s, TUI_HEALTH_FULL, &role));
    assert_string_equal(out, "GPU health: 1 action, 1 warning (e: events)");
    assert_int_equal(role, R_ALARM);
    assert_true(tui_health_summary(out, sizeof(out), &s, TUI_HEALTH_BRIEF, &role));
    assert_string_equal(out, "health: 1 action, 1 warning");
    assert_true(tui_health_summary(out, sizeof(out), &s, TUI_HEALTH_TINY, &role));
    assert_string_equal(out, "health !!");
    assert_int_equal(role, R_ALARM);
    devs[1].health = HEALTH_ACTION;
    assert_true(tui_health_summary(out, sizeof(out), &s, TUI_HEALTH_FULL, &role));
    assert_string_equal(out, "GPU health: 2 action (e: events)");
    /* an instance whose GPU is not in the snapshot counts by itself */
    devs[1].parent_pos = devs[2].parent_pos = -1;
    devs[0].health = HEALTH_OK;
    assert_true(tui_health_summary(out, sizeof(out), &s, TUI_HEALTH_FULL, &role));
    assert_string_equal(out, "GPU health: 2 action, 1 warning (e: events)");
    assert_false(tui_health_summary(out, sizeof(out), NULL, TUI_HEALTH_FULL, &role));
}

static void test_events_text(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    struct snapshot s;
    make_tree(&s);
    devs[2].gi_id = 5;
    devs[2].ci_id = 0;
    struct gpu_event ev[2];
    memset(ev, 0, sizeof(ev));
    /* 1764547200: 2025-12-01 00:00:00 UTC; the snapshot at 200 s */
    s.elapsed_ns = 200000000000ull;
    ev[0] = (struct gpu_event){.elapsed_ns = 10000000000ull,
                               .wall_ns = 1764547204000000000ll,
                               .device_pos = 2,
                               .gi_id = 5,
                               .ci_id = 0,
                               .xid = 94,
                               .type = NVML_EVENT_TYPE_XID};
    ev[1] = (struct gpu_event){.elapsed_ns = 195000000000ull,
                               .wall_ns = 1764547389000000000ll,
                               .device_pos = 3,
                               .gi_id = -1,
                               .ci_id = -1,
                               .xid = 0,
                               .type = NVML_EVENT_TYPE_DOUBLE_BIT_ECC};
    s.events = ev;
    s.nevents = s.events_cap = 2;
    s.events_total = 2;
    static char out[4096];
    assert_int_equal(tui_events_text(out, sizeof(out), &s), 2);
    assert_string_equal(
        out,
        "2 events since the monitor started, newest first\n"
        "00:03:09     5 s ago  GPU 1                      ECC DBE  double-bit ECC error "
        "(uncorrectable memory error)\n"
        "    action: restart the jobs on this GPU; watch the remapped rows (detail panel)\n"
        "00:00:04   3 min ago  MIG 0/1 2g.35gb GI 5 CI 0  Xid 94   contained ECC error (only the "
        "processes "
        "using the bad memory were affected)\n"
        "    action: restart the jobs on the affected MIG instance\n");
    /* older events than the 64 kept; a GPU the snapshot does not have; an
     * instance the snapshot does not list */
    s.events_total = 70;
    ev[1] = (struct gpu_event){.elapsed_ns = 199000000000ull,
                               .device_pos = -1,
                               .gi_id = -1,
                               .ci_id = -1,
                               .xid = 79,
                               .type = NVML_EVENT_TYPE_XID};
    snprintf(ev[1].gpu_uuid, sizeof(ev[1].gpu_uuid), "GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8");
    ev[0].device_pos = 0;
    assert_int_equal(tui_events_text(out, sizeof(out), &s), 2);
    assert_string_equal(
        out,
        "70 events since the monitor started, newest first; the 2 newest kept, 68 older not "
        "shown\n"
        "--:--:--     1 s ago  GPU-2e9b7c41     Xid 79   GPU has fallen off the bus\n"
        "    action: drain the node and reset or reseat the GPU\n"
        "00:00:04   3 min ago  GPU 0 GI 5 CI 0  Xid 94   contained ECC error (only the processes "
        "using the bad memory were affected)\n"
        "    action: restart the jobs on the affected MIG instance\n");
    /* events cannot be had: why, and the ones kept from before */
    s.events_why = "no NVML event API in this driver";
    s.nevents = 0;
    s.events_total = 0;
    assert_int_equal(tui_events_text(out, sizeof(out), &s), 0);
    assert_string_equal(out, "no health events: no NVML event API in this driver\n");
    s.events_why = NULL;
    assert_int_equal(tui_events_text(out, sizeof(out), &s), 0);
    assert_string_equal(out, "No health event since the monitor started.\n");
    /* a short buffer is cut, never overrun */
    s.nevents = 2;
    s.events_total = 2;
    char small[40];
    memset(small, 'X', sizeof(small));
    tui_events_text(small, 30, &s);
    assert_int_equal(strlen(small), 29);
    assert_int_equal(small[39], 'X');
}

static void test_duration(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(tui_fmt_duration(b, sizeof(b), 0), "0 s");
    assert_string_equal(tui_fmt_duration(b, sizeof(b), -3), "0 s");
    assert_string_equal(tui_fmt_duration(b, sizeof(b), 119.9), "119 s");
    assert_string_equal(tui_fmt_duration(b, sizeof(b), 179), "2 min");
    assert_string_equal(tui_fmt_duration(b, sizeof(b), 7199), "119 min");
    assert_string_equal(tui_fmt_duration(b, sizeof(b), 7200), "2 h");
    assert_string_equal(tui_fmt_duration(b, sizeof(b), 3 * 86400 + 5), "3 d");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mark_per_level),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_events_text),
        cmocka_unit_test(test_duration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Health events as JSON Lines (src/export/json_events.c): the event line's
 * members, the dropped line, a UUID as the events helper read it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backend/nvml/nvml_api.h"
#include "export/json_events.h"

static void test_lines(void **state)
{
    (void)state;
    struct device dev[2];
    memset(dev, 0, sizeof(dev));
    dev[0].kind = DEV_GPU;
    dev[0].index = 1;
    dev[0].mig_index = dev[0].parent_pos = -1;
    snprintf(dev[0].uuid, sizeof(dev[0].uuid), "GPU-1");
    dev[1].kind = DEV_MIG;
    dev[1].index = 1;
    dev[1].mig_index = 2;
    dev[1].parent_pos = 0;
    snprintf(dev[1].uuid, sizeof(dev[1].uuid), "MIG-2");
    struct gpu_event ev[2];
    memset(ev, 0, sizeof(ev));
    snprintf(ev[0].gpu_uuid, sizeof(ev[0].gpu_uuid), "GPU-1");
    ev[0].elapsed_ns = 12300000000ull;
    ev[0].wall_ns = 1700000000123000000;
    ev[0].device_pos = 1;
    ev[0].gi_id = 13;
    ev[0].ci_id = 0;
    ev[0].xid = 43;
    ev[0].type = NVML_EVENT_TYPE_XID;
    snprintf(ev[1].gpu_uuid, sizeof(ev[1].gpu_uuid), "GPU-\x1b]0;x\a");
    ev[1].elapsed_ns = 12400000000ull;
    ev[1].wall_ns = 1700000000223000000;
    ev[1].device_pos = -1;
    ev[1].gi_id = ev[1].ci_id = -1;
    ev[1].type = NVML_EVENT_TYPE_SINGLE_BIT_ECC;
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    s.elapsed_ns = 12500000000ull;
    s.wall_ns = 1700000000323000000;
    s.devices = dev;
    s.ndevices = 2;
    s.events = ev;
    s.nevents = 2;
    s.events_total = 3;
    struct eventlog_batch b;
    eventlog_all(&s, &b);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    json_write_event_lines(f, &s, &b);
    fclose(f);
    assert_string_equal(
        buf,
        "{\"type\":\"events_dropped\",\"elapsed_ns\":12500000000,\"wall_ns\":1700000000323000000,"
        "\"timestamp\":\"2023-11-14T22:13:20.323Z\",\"count\":1,\"reason\":\"" JSON_EVENTS_DROPPED_WHY
        "\"}\n"
        "{\"type\":\"event\",\"elapsed_ns\":12300000000,\"wall_ns\":1700000000123000000,"
        "\"timestamp\":\"2023-11-14T22:13:20.123Z\",\"event_type\":\"xid\",\"gpu\":1,"
        "\"uuid\":\"GPU-1\",\"device\":\"MIG-2\",\"mig_index\":2,\"gi_id\":13,\"ci_id\":0,"
        "\"xid\":43,\"meaning\":\"GPU stopped processing: a context was reset after an "
        "application fault\",\"action\":\"the job's own bug or input: check the application\"}\n"
        "{\"type\":\"event\",\"elapsed_ns\":12400000000,\"wall_ns\":1700000000223000000,"
        "\"timestamp\":\"2023-11-14T22:13:20.223Z\",\"event_type\":\"sbe\",\"gpu\":null,"
        "\"uuid\":\"GPU-?]0;x?\",\"device\":null,\"mig_index\":null,\"gi_id\":null,\"ci_id\":null,"
        "\"xid\":null,\"meaning\":null,\"action\":null}\n");
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* libFuzzer target for the NVML boundary: a fake driver whose every answer
 * comes from the input, driving whole ticks and every output format; see
 * fuzz/fuzz_nvml_drv.h and fuzz/fuzz.mk. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_nvml_drv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *why = fuzz_check_nvml(data, size);
    if (why) {
        fprintf(stderr, "invariant broken: %s\n", why);
        abort();
    }
    return 0;
}

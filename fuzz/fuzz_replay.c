/* libFuzzer target for the recording reader (src/backend/replay/); see fuzz/fuzz.mk. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_replay_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *why = fuzz_check_replay(data, size);
    if (why) {
        fprintf(stderr, "invariant broken: %s\n", why);
        abort();
    }
    return 0;
}

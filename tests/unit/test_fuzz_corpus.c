/* test_fuzz_corpus.c — replay fuzz/corpus/<target>/ through the /proc parsers
 * with the fuzzers' own invariants (fuzz/fuzz_check.h), so every input the
 * fuzzers kept, crashers included, stays a regression test in `make check`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../fuzz/fuzz_check.h"

typedef const char *(*check_fn)(const uint8_t *data, size_t size);

static void replay(const char *target, check_fn check)
{
    const char *src = getenv("MIGMON_SRC");
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/fuzz/corpus/%s", src ? src : ".", target);
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("cannot open %s", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[8192];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            fail_msg("cannot open %s", path);
        static uint8_t buf[1 << 20];
        size_t len = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        /* An exact-size copy, as libFuzzer gives, so ASan sees any overread. */
        uint8_t *data = malloc(len ? len : 1);
        assert_non_null(data);
        memcpy(data, buf, len);
        const char *why = check(data, len);
        free(data);
        if (why)
            fail_msg("%s: %s", path, why);
        n++;
    }
    closedir(d);
    if (n < 10)
        fail_msg("%s: only %d inputs; the corpus is missing", dir, n);
    print_message("%s: %d inputs\n", target, n);
}

static void test_procstat_corpus(void **state)
{
    (void)state;
    replay("procstat", fuzz_check_procstat);
}

static void test_meminfo_corpus(void **state)
{
    (void)state;
    replay("meminfo", fuzz_check_meminfo);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_procstat_corpus),
        cmocka_unit_test(test_meminfo_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

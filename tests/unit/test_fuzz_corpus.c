/* test_fuzz_corpus.c — replay fuzz/corpus/<target>/ through the /proc parsers
 * and the NVML backend with the fuzzers' own invariants (fuzz/fuzz_check.h,
 * fuzz/fuzz_nvml_drv.h), so every input the fuzzers kept, crashers
 * included, stays a regression test in `make check`. */
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
#include "../../fuzz/fuzz_nvml_drv.h"
#include "../../fuzz/fuzz_replay_check.h"

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

static void test_procinfo_corpus(void **state)
{
    (void)state;
    replay("procinfo", fuzz_check_procinfo);
}

static void test_replay_corpus(void **state)
{
    (void)state;
    replay("replay", fuzz_check_replay);
}

static void test_nvml_corpus(void **state)
{
    (void)state;
    replay("nvml", fuzz_check_nvml);
}

/* The escape sequences a user can put in a process name never reach the
 * terminal: the regression the procinfo corpus starts from. */
static void test_sanitize_escape(void **state)
{
    (void)state;
    char s[] = "\033]0;pwned\007top\tx\x7f\xc2\x9b" "2J \xc3\xa9t\xc3\xa9";
    procinfo_sanitize(s);
    assert_string_equal(s, "?]0;pwned?top?x???2J \xc3\xa9t\xc3\xa9"); /* é kept */
    struct procinfo_stat st;
    assert_int_equal(procinfo_parse_stat("42 (a\033[2Jb) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 "
                                         "15 16 17 18 19 20 21 22", &st), 0);
    assert_string_equal(st.comm, "a?[2Jb");
    int64_t ns[4];
    assert_int_equal(procinfo_parse_nspid("NSpid:\t4242\t0\t7\n", ns, 4), 1);
    assert_int_equal(ns[0], 4242);
    assert_int_equal(procinfo_parse_nspid("NSpid:\t99999999999\n", ns, 4), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_procstat_corpus),
        cmocka_unit_test(test_meminfo_corpus),
        cmocka_unit_test(test_procinfo_corpus),
        cmocka_unit_test(test_nvml_corpus),
        cmocka_unit_test(test_replay_corpus),
        cmocka_unit_test(test_sanitize_escape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

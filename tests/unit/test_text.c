/* Strings from outside made safe (src/text.c): valid UTF-8, no terminal
 * controls, length kept, always terminated; and JSON output that is valid
 * UTF-8 whatever a string holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "export/jsonw.h"
#include "text.h"

static void test_decode(void **state)
{
    (void)state;
    uint32_t cp = 0;
    assert_int_equal(text_utf8_decode((const unsigned char *)"A", 1, &cp), 1);
    assert_int_equal(cp, 'A');
    assert_int_equal(text_utf8_decode((const unsigned char *)"\xc3\xa9", 2, &cp), 2);
    assert_int_equal(cp, 0xe9);
    assert_int_equal(text_utf8_decode((const unsigned char *)"\xe2\x80\xae", 3, &cp), 3);
    assert_int_equal(cp, 0x202e);
    assert_int_equal(text_utf8_decode((const unsigned char *)"\xf0\x9f\x98\x80", 4, &cp), 4);
    assert_int_equal(cp, 0x1f600);
    /* invalid: lone continuation, overlong, surrogate, truncated, > U+10FFFF */
    assert_int_equal(text_utf8_decode((const unsigned char *)"\x9b", 1, &cp), 0);
    assert_int_equal(text_utf8_decode((const unsigned char *)"\xc0\xaf", 2, &cp), 0);
    assert_int_equal(text_utf8_decode((const unsigned char *)"\xed\xa0\x80", 3, &cp), 0);
    assert_int_equal(text_utf8_decode((const unsigned char *)"\xe2\x80", 2, &cp), 0);
    assert_int_equal(text_utf8_decode((const unsigned char *)"\xf4\x90\x80\x80", 4, &cp), 0);
}

static void test_controls(void **state)
{
    (void)state;
    assert_true(text_is_control(0x1b));
    assert_true(text_is_control(0x7f));
    assert_true(text_is_control(0x9b));   /* CSI as a C1 code point */
    assert_true(text_is_control(0x202e)); /* right-to-left override */
    assert_true(text_is_control(0x2066));
    assert_false(text_is_control(0x2065));
    assert_false(text_is_control(0xe9));
    assert_false(text_is_control(' '));
}

static void test_clean(void **state)
{
    (void)state;
    /* ESC[2J, an OSC title, a raw C1 byte, C1 in UTF-8, RLO, invalid bytes;
     * é and ★ kept; same length */
    char s[] = "A\033[2J\033]0;t\007\x9b\xc2\x9b\xe2\x80\xae\xff\xfe\xc3\xa9\xe2\x98\x85Z";
    size_t len = strlen(s);
    assert_true(text_clean(s, sizeof(s)));
    assert_int_equal(strlen(s), len);
    assert_string_equal(s, "A?[2J?]0;t?????????\xc3\xa9\xe2\x98\x85Z");
    /* already clean: untouched, false */
    char ok[] = "NVIDIA H100 80GB HBM3";
    assert_false(text_clean(ok, sizeof(ok)));
    /* not terminated within its buffer: cut and terminated */
    char full[8];
    memset(full, 'x', sizeof(full));
    assert_true(text_clean(full, sizeof(full)));
    assert_string_equal(full, "xxxxxxx");
    /* a multi-byte character cut by the bound is invalid, so replaced */
    char cut[4] = {'a', (char)0xe2, (char)0x98, (char)0x85};
    text_clean(cut, sizeof(cut));
    assert_string_equal(cut, "a??");
    /* lines: newline kept, other controls not */
    char lines[] = "line 1\nline\t2\033";
    text_clean_lines(lines, sizeof(lines));
    assert_string_equal(lines, "line 1\nline?2?");
}

static void test_json_is_valid_utf8(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    struct jsonw w;
    jsonw_init(&w, f, false);
    jsonw_str(&w, "a\xff\x9b\xc3\xa9\033\xe2\x80\xae\"b");
    fclose(f);
    /* invalid bytes -> U+FFFD, controls -> \\u escapes, é kept */
    assert_string_equal(buf, "\"a\xef\xbf\xbd\xef\xbf\xbd\xc3\xa9\\u001b\\u202e\\\"b\"");
    free(buf);
}

/* text_copy is snprintf("%s") without the formatting: the same bytes. */
static void test_copy(void **state)
{
    (void)state;
    const char *cases[] = {"", "A100", "MIG-4d2b1f6e-0000-5555-aaaa-1234567890ab", "exactly7"};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (size_t cap = 1; cap <= 48; cap++) {
            char a[48], b[48];
            memset(a, 'x', sizeof(a));
            memset(b, 'x', sizeof(b));
            snprintf(a, cap, "%s", cases[i]);
            text_copy(b, cap, cases[i]);
            assert_memory_equal(a, b, sizeof(a));
        }
    }
}

/* Edits from one name to another: a swap of neighbours is one. */
static void test_distance(void **state)
{
    (void)state;
    assert_int_equal(text_distance("record", "record"), 0);
    assert_int_equal(text_distance("recrod", "record"), 1);
    assert_int_equal(text_distance("rceord", "record"), 1);
    assert_int_equal(text_distance("recod", "record"), 1);
    assert_int_equal(text_distance("records", "record"), 1);
    assert_int_equal(text_distance("h200-mgi", "h200-mig"), 1);
    assert_int_equal(text_distance("", "abc"), 3);
    assert_int_equal(text_distance("abc", ""), 3);
    assert_int_equal(text_distance("kitten", "sitting"), 3);
    assert_int_equal(text_distance("ca", "abc"), 3); /* no edit of a swapped pair again */
    char longer[TEXT_DISTANCE_LEN + 2];
    memset(longer, 'a', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    assert_int_equal(text_distance(longer, "a"), TEXT_DISTANCE_FAR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_controls),
        cmocka_unit_test(test_clean),
        cmocka_unit_test(test_json_is_valid_utf8),
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_distance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Strings from outside made safe (src/core/text.c): valid UTF-8, no terminal
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

#include "core/text.h"
#include "export/jsonw.h"

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
    assert_true(text_is_control(0x2065)); /* reserved, in the format block U+2060-U+206F */
    /* the marks and invisible characters the bidi overrides have beside them */
    uint32_t hidden[] = {0x200f, 0x200e, 0x061c, 0x2028, 0x2029, 0xfeff, 0x200b, 0x200c,
                         0x200d, 0x2060, 0x2064, 0x00ad, 0xfff9, 0xfffb, 0xe0001, 0xe0041,
                         0xe007f, 0x13439, 0x1343f};
    for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++)
        assert_true(text_is_control(hidden[i]));
    /* what is shown: letters of other scripts, symbols, spaces, emoji,
     * the neighbours of the ranges */
    uint32_t shown[] = {' ',    0xa0,   0xe9,    0xac,    0xae,    0x0627,  0x05d0,
                        0x200a, 0x2010, 0x2027,  0x202f,  0x205f,  0x2070,  0x3000,
                        0x4e2d, 0xfefe, 0xfff8,  0xfffc,  0xfffd,  0x1f600, 0x1f1fa,
                        0xe0080, 0xe0100, 0x1342f, 0x13440, 0x10ffff};
    for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
        assert_false(text_is_control(shown[i]));
}

/* Every code point above C1 that text_is_control names is one of Python's
 * unicodedata Cf, Zl or Zp (tests/fixtures/unicode/format-chars.txt), or
 * one of the few the list adds on purpose; and the other way round. */
static void test_format_chars_are_unicodes(void **state)
{
    (void)state;
    const char *src = getenv("MIGMON_SRC");
    char path[4096];
    snprintf(path, sizeof(path), "%s/tests/fixtures/unicode/format-chars.txt", src ? src : ".");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static bool want[0x110000];
    memset(want, 0, sizeof(want));
    char line[256];
    size_t ranges = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned a, b;
        if (line[0] == '#' || sscanf(line, "%x %x", &a, &b) != 2)
            continue;
        assert_true(a <= b && b < 0x110000);
        for (unsigned c = a; c <= b; c++)
            want[c] = true;
        ranges++;
    }
    fclose(f);
    assert_true(ranges >= 20);
    /* Unicode 15's new Egyptian hieroglyph format controls (the fixture's
     * unicodedata may be older), and the reserved code points of the
     * blocks taken whole */
    for (unsigned c = 0x13439; c <= 0x1343f; c++)
        want[c] = true;
    want[0x2065] = want[0xe0000] = true;
    for (unsigned c = 0xe0002; c <= 0xe001f; c++)
        want[c] = true;
    for (uint32_t c = 0xa0; c < 0x110000; c++) {
        if (c >= 0xd800 && c <= 0xdfff)
            continue;
        if (text_is_control(c) != want[c])
            fail_msg("U+%04X: text_is_control %d, Unicode's format characters %d", (unsigned)c,
                     text_is_control(c), want[c]);
    }
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
    /* a multi-byte character cut by the bound goes whole: the cut is on a
     * character boundary */
    char cut[4] = {'a', (char)0xe2, (char)0x98, (char)0x85};
    assert_true(text_clean(cut, sizeof(cut)));
    assert_string_equal(cut, "a");
    /* the format characters a name can hide behind: RLM, ALM, the line and
     * paragraph separators, BOM, ZWSP, a soft hyphen, a tag; each byte '?' */
    char fmt[] = "a\xe2\x80\x8f" "b\xd8\x9c" "c\xe2\x80\xa8" "d\xe2\x80\xa9" "e\xef\xbb\xbf"
                 "f\xe2\x80\x8b" "g\xc2\xad" "h\xf3\xa0\x81\x81" "i";
    assert_true(text_clean(fmt, sizeof(fmt)));
    assert_string_equal(fmt, "a???b??c???d???e???f???g??h????i");
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
    jsonw_flush(&w);
    fclose(f);
    /* invalid bytes -> U+FFFD, controls -> \\u escapes, é kept */
    assert_string_equal(buf, "\"a\xef\xbf\xbd\xef\xbf\xbd\xc3\xa9\\u001b\\u202e\\\"b\"");
    free(buf);
    /* a format character past U+FFFF (a tag) as its UTF-16 surrogate pair */
    buf = NULL;
    f = open_memstream(&buf, &n);
    jsonw_init(&w, f, false);
    jsonw_str(&w, "x\xf3\xa0\x81\x81\xe2\x80\x8fy");
    jsonw_flush(&w);
    fclose(f);
    assert_string_equal(buf, "\"x\\udb40\\udc41\\u200fy\"");
    free(buf);
}

/* A cut never leaves half a character; an invalid byte is a character of
 * its own. */
static void test_cut(void **state)
{
    (void)state;
    const char *s = "ab\xc3\xa9\xe2\x98\x85\xf0\x9f\x98\x80z"; /* a b é ★ 😀 z */
    size_t n = strlen(s);
    size_t want[] = {0, 1, 2, 2, 4, 4, 4, 7, 7, 7, 7, 11, 12};
    for (size_t max = 0; max <= n; max++)
        assert_int_equal(text_utf8_cut(s, n, max), want[max]);
    assert_int_equal(text_utf8_cut(s, n, 100), n);
    /* stray continuation bytes and a lead byte with too few after it */
    assert_int_equal(text_utf8_cut("a\x80\x80\x80\x80" "b", 6, 3), 3);
    assert_int_equal(text_utf8_cut("a\xe2\x98z", 4, 2), 1);
    assert_int_equal(text_utf8_cut("a\xff\xfe", 3, 2), 2);
}

/* text_take: cut to the buffer on a boundary, cleaned, and says so. */
static void test_take(void **state)
{
    (void)state;
    char d[6];
    assert_false(text_take(d, sizeof(d), "llm-0"));
    assert_string_equal(d, "llm-0");
    assert_true(text_take(d, sizeof(d), "ab\xe2\x98\x85\xe2\x98\x85")); /* "ab★★": 8 bytes */
    assert_string_equal(d, "ab\xe2\x98\x85");
    assert_true(text_take(d, sizeof(d), "a\xc2\x85\xe2\x80\xae")); /* NEL, RLO */
    assert_string_equal(d, "a??");
    /* a name as long as Kubernetes allows is never cut */
    char name[TEXT_NAME_MAX + 1], big[TEXT_NAME_MAX + 2];
    memset(big, 'p', TEXT_NAME_MAX);
    big[TEXT_NAME_MAX] = '\0';
    assert_false(text_take(name, sizeof(name), big));
    assert_int_equal(strlen(name), TEXT_NAME_MAX);
    big[TEXT_NAME_MAX] = 'q', big[TEXT_NAME_MAX + 1] = '\0';
    assert_true(text_take(name, sizeof(name), big));
    assert_int_equal(strlen(name), TEXT_NAME_MAX);
}

/* A URL's userinfo never shown: the password, or a user part that may be a
 * token. */
static void test_url_redact(void **state)
{
    (void)state;
    char out[128];
    struct {
        const char *in, *want;
    } cases[] = {
        {"http://user:pw@host:9090", "http://user:***@host:9090"},
        {"https://user:p%40ss@prom.example/api?x=a@b", "https://user:***@prom.example/api?x=a@b"},
        {"https://u:p@ss@host/", "https://u:***@host/"}, /* an unescaped '@' in the password */
        {"http://TOKEN@host", "http://***@host"},
        {"http://:pw@host", "http://:***@host"},
        {"http://host:9090/prom", "http://host:9090/prom"},
        {"http://host/a@b", "http://host/a@b"}, /* an '@' in the path is no userinfo */
        {"user:pw@host:9090", "user:***@host:9090"}, /* no scheme */
        {"http://host\033]0;t\007", "http://host?]0;t?"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        text_url_redact(out, sizeof(out), cases[i].in);
        assert_string_equal(out, cases[i].want);
    }
    char small[12];
    text_url_redact(small, sizeof(small), "http://u:secret@h");
    assert_string_equal(small, "http://u:**");
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
        cmocka_unit_test(test_format_chars_are_unicodes),
        cmocka_unit_test(test_clean),
        cmocka_unit_test(test_json_is_valid_utf8),
        cmocka_unit_test(test_cut),
        cmocka_unit_test(test_take),
        cmocka_unit_test(test_url_redact),
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_distance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Numbers as CSV and line protocol write them (src/export/numfmt.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "export/numfmt.h"

static void test_shapes(void **state)
{
    (void)state;
    char b[64];
    assert_true(numfmt_double(b, sizeof(b), 4096));
    assert_string_equal(b, "4096");
    assert_true(numfmt_double(b, sizeof(b), -2.5));
    assert_string_equal(b, "-2.5");
    assert_true(numfmt_double(b, sizeof(b), 0.1234567));
    assert_string_equal(b, "0.123457");
    assert_true(numfmt_double(b, sizeof(b), 1e20));
    assert_string_equal(b, "100000000000000000000");
    assert_false(numfmt_double(b, sizeof(b), NAN));
    assert_string_equal(b, "");
    assert_false(numfmt_double(b, sizeof(b), -INFINITY));
}

/* Past what "%.6f" writes in 64 bytes: the exponent form, read back
 * exactly (a cut number would read as another value). */
static void test_huge(void **state)
{
    (void)state;
    char b[64];
    const double v[] = {1e300, -1.7976931348623157e308, 3.5e51};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        assert_true(numfmt_double(b, sizeof(b), v[i]));
        assert_true(strtod(b, NULL) == v[i]);
    }
    assert_true(numfmt_double(b, sizeof(b), 1e300));
    assert_string_equal(b, "1.0000000000000001e+300");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_huge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * text.c — UTF-8 validation and control stripping for outside strings.
 */
#include "text.h"

#include <string.h>

size_t text_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (n == 0)
        return 0;
    unsigned char c = s[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
        len = 2, v = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, v = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0; /* a continuation byte, 0xc0/0xc1 (overlong) or > 0xf4 */
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

bool text_is_control(uint32_t cp)
{
    return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

static bool clean(char *s, size_t cap, bool lines)
{
    if (cap == 0)
        return false;
    size_t n = strnlen(s, cap);
    bool changed = n == cap; /* not terminated within cap */
    if (n == cap)
        n = cap - 1;
    s[n] = '\0';
    /* In place and length-preserving: a byte of an invalid sequence and
     * every byte of a control become '?'. */
    unsigned char *p = (unsigned char *)s;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = text_utf8_decode(p + i, n - i, &cp);
        if (len == 0) {
            p[i++] = '?';
            changed = true;
        } else if (text_is_control(cp) && !(lines && cp == '\n')) {
            memset(p + i, '?', len);
            i += len;
            changed = true;
        } else {
            i += len;
        }
    }
    return changed;
}

bool text_clean(char *s, size_t cap)
{
    return clean(s, cap, false);
}

bool text_clean_lines(char *s, size_t cap)
{
    return clean(s, cap, true);
}

void text_copy(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memmove(dst, src, n);
    dst[n] = '\0';
}

unsigned text_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > TEXT_DISTANCE_LEN || m > TEXT_DISTANCE_LEN)
        return TEXT_DISTANCE_FAR;
    /* three rows of the table: i - 2, i - 1 and i */
    unsigned rows[3][TEXT_DISTANCE_LEN + 1];
    for (size_t j = 0; j <= m; j++)
        rows[0][j] = (unsigned)j;
    for (size_t i = 1; i <= n; i++) {
        unsigned *cur = rows[i % 3], *prev = rows[(i - 1) % 3], *prev2 = rows[(i + 1) % 3];
        cur[0] = (unsigned)i;
        for (size_t j = 1; j <= m; j++) {
            unsigned cost = a[i - 1] != b[j - 1];
            unsigned d = prev[j] + 1; /* a deletion */
            if (cur[j - 1] + 1 < d)
                d = cur[j - 1] + 1; /* an insertion */
            if (prev[j - 1] + cost < d)
                d = prev[j - 1] + cost; /* a substitution */
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                prev2[j - 2] + 1 < d)
                d = prev2[j - 2] + 1; /* two neighbours swapped */
            cur[j] = d;
        }
    }
    return rows[n % 3][m];
}

/*
 * text.c — UTF-8 validation, control and format character stripping,
 * cutting and URL redaction for outside strings (text.h).
 */
#include "core/text.h"

#include <stdio.h>
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

/* The hidden characters above U+009F (text.h), sorted: Unicode 15's Cf,
 * Zl and Zp, with the reserved code points of the blocks that are format
 * characters throughout (U+2060-U+206F, U+E0000-U+E007F). */
static const struct {
    uint32_t lo, hi;
} hidden[] = {
    {0x00ad, 0x00ad},   {0x0600, 0x0605},   {0x061c, 0x061c},   {0x06dd, 0x06dd},
    {0x070f, 0x070f},   {0x0890, 0x0891},   {0x08e2, 0x08e2},   {0x180e, 0x180e},
    {0x200b, 0x200f},   {0x2028, 0x202e},   {0x2060, 0x206f},   {0xfeff, 0xfeff},
    {0xfff9, 0xfffb},   {0x110bd, 0x110bd}, {0x110cd, 0x110cd}, {0x13430, 0x1343f},
    {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0000, 0xe007f},
};

bool text_is_control(uint32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
        return true;
    if (cp < 0xad)
        return false;
    size_t lo = 0, hi = sizeof(hidden) / sizeof(hidden[0]);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < hidden[mid].lo)
            hi = mid;
        else if (cp > hidden[mid].hi)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

size_t text_utf8_cut(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return n;
    /* s[max] is the first byte left out: when it continues a sequence,
     * the cut moves back to where that sequence starts (a valid one has
     * at most three continuation bytes) */
    const unsigned char *p = (const unsigned char *)s;
    size_t k = max;
    while (k > 0 && max - k < 3 && (p[k] & 0xc0) == 0x80)
        k--;
    if ((p[k] & 0xc0) != 0x80 && p[k] >= 0xc2 && p[k] <= 0xf4) {
        size_t len = p[k] >= 0xf0 ? 4 : p[k] >= 0xe0 ? 3 : 2;
        if (k + len > max)
            return k;
    }
    return max;
}

static bool clean(char *s, size_t cap, bool lines)
{
    if (cap == 0)
        return false;
    size_t n = strnlen(s, cap);
    bool changed = n == cap; /* not terminated within cap */
    if (n == cap)
        n = text_utf8_cut(s, cap, cap - 1);
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

bool text_take(char *dst, size_t cap, const char *src)
{
    size_t len = strlen(src);
    size_t n = text_utf8_cut(src, len, cap - 1);
    memmove(dst, src, n);
    dst[n] = '\0';
    return text_clean(dst, cap) || n < len;
}

void text_copy(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memmove(dst, src, n);
    dst[n] = '\0';
}

void text_url_redact(char *dst, size_t cap, const char *url)
{
    const char *sep = strstr(url, "://");
    const char *auth = sep ? sep + 3 : url;
    size_t alen = strcspn(auth, "/?#");
    /* the last '@' of the authority: a password may hold one unescaped */
    const char *at = NULL;
    for (const char *p = auth; p < auth + alen; p++)
        if (*p == '@')
            at = p;
    if (!at) {
        text_take(dst, cap, url);
        return;
    }
    const char *colon = memchr(auth, ':', (size_t)(at - auth));
    int keep = colon ? (int)(colon - auth) : 0; /* the user name, before the password */
    snprintf(dst, cap, "%.*s%.*s%s***%s", (int)(auth - url), url, keep, auth, colon ? ":" : "",
             at);
    text_clean(dst, cap);
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

#include "export/numfmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

bool numfmt_double(char *out, size_t len, double v)
{
    if (len == 0)
        return false;
    out[0] = '\0';
    if (!isfinite(v))
        return false;
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        snprintf(out, len, "%.0f", v);
        return true;
    }
    if (fabs(v) >= 1e50) { /* "%.6f" would need up to 316 bytes: the shortest exact form */
        snprintf(out, len, "%.17g", v);
        return true;
    }
    snprintf(out, len, "%.6f", v);
    char *dot = strchr(out, '.');
    if (dot) {
        char *end = out + strlen(out) - 1;
        while (end > dot && *end == '0')
            *end-- = '\0';
        if (end == dot)
            *end = '\0';
    }
    return true;
}

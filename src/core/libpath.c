/*
 * libpath.c — a vendor library's absolute path, found without the current
 * directory (libpath.h; the choice of the ld.so cache over a list of
 * directories: docs/decisions.md).
 */
#include "core/libpath.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/debuglog.h"

#define LDSO_CACHE "/etc/ld.so.cache"
/* A cache is some 100 KB; one past this is not read (a hostile file). */
#define CACHE_MAX (64u << 20)

/* The ELF objects this build can load: ld.so passes over the others (a
 * 32-bit library in /usr/lib, an i386 entry in the cache). */
#if defined(__LP64__)
#define OUR_CLASS ELFCLASS64
#else
#define OUR_CLASS ELFCLASS32
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define OUR_DATA ELFDATA2LSB
#else
#define OUR_DATA ELFDATA2MSB
#endif

/* The machine, and the Debian multiarch triplet of the system's library
 * directories (glibc's own list for the build: ld.so --help). */
#if defined(__x86_64__) && defined(__LP64__)
#define OUR_MACHINE EM_X86_64
#define TRIPLET "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define OUR_MACHINE EM_AARCH64
#define TRIPLET "aarch64-linux-gnu"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define OUR_MACHINE EM_PPC64
#define TRIPLET "powerpc64le-linux-gnu"
#elif defined(__s390x__)
#define OUR_MACHINE EM_S390
#define TRIPLET "s390x-linux-gnu"
#elif defined(__riscv) && defined(__LP64__)
#define OUR_MACHINE EM_RISCV
#define TRIPLET "riscv64-linux-gnu"
#elif defined(__i386__)
#define OUR_MACHINE EM_386
#define TRIPLET "i386-linux-gnu"
#else
#define OUR_MACHINE 0 /* not checked: the class and byte order still are */
#endif

static const char *const system_dirs[] = {
#ifdef TRIPLET
    "/lib/" TRIPLET, "/usr/lib/" TRIPLET,
#endif
    "/lib64", "/usr/lib64", "/lib", "/usr/lib",
};

/* A regular file we may read that is not an ELF object of another class,
 * byte order or machine. A file that is not ELF at all is usable: ld.so
 * stops at it with its error, and so does the caller's dlopen. */
static bool usable(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    unsigned char h[EI_NIDENT + 4];
    if (ok && pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
        memcmp(h, ELFMAG, SELFMAG) == 0) {
        uint16_t machine;
        memcpy(&machine, h + EI_NIDENT + 2, sizeof(machine)); /* e_machine, our byte order */
        ok = h[EI_CLASS] == OUR_CLASS && h[EI_DATA] == OUR_DATA &&
             (OUR_MACHINE == 0 || machine == OUR_MACHINE);
    }
    close(fd);
    return ok;
}

/* ---- LD_LIBRARY_PATH ---- */

/* ld.so separates entries with ':' or ';'. Only an absolute entry is
 * searched: an empty one or "." or "lib" is the current directory, or one
 * below it, and "$ORIGIN/..." is relative to the program (not expanded). */
static int env_each(const char *llp, bool secure, int (*fn)(const char *, size_t, void *),
                    void *ctx)
{
    if (!llp || secure)
        return 0;
    for (const char *p = llp;;) {
        size_t n = strcspn(p, ":;");
        if (n > 0 && p[0] == '/') {
            int rc = fn(p, n, ctx);
            if (rc)
                return rc;
        }
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

int libpath_env_each(int (*fn)(const char *dir, size_t len, void *ctx), void *ctx)
{
    return env_each(getenv("LD_LIBRARY_PATH"), getauxval(AT_SECURE) != 0, fn, ctx);
}

/* ---- /etc/ld.so.cache ---- */

/*
 * The format, glibc's sysdeps/generic/dl-cache.h: the new format alone
 * (glibc 2.32 and later), or after the old one (the "compat" format).
 *   old: "ld.so-1.7.0", uint32 nlibs at 12, entries of 12 bytes from 16
 *        (int32 flags, uint32 key, uint32 value); strings follow the
 *        entries, offsets from there.
 *   new: "glibc-ld.so.cache" "1.1", uint32 nlibs at 20, entries of 24
 *        bytes from 48 (int32 flags, uint32 key, uint32 value, uint32
 *        osversion, uint64 hwcap); offsets from the new header. After an
 *        old part it starts at the next 8-byte boundary.
 * flags & 0xff is the type: 1 ELF, 3 ELF for glibc (libc6); the high bits
 * name the ABI (0x0300 x86-64), left to the ELF check. A non-zero hwcap is
 * a library for a CPU feature level (glibc-hwcaps/x86-64-v3) that ours may
 * lack; its baseline entry is there too.
 */
#define OLD_MAGIC "ld.so-1.7.0"
#define NEW_MAGIC "glibc-ld.so.cache1.1"
#define OLD_HDR 16u
#define OLD_ENTRY 12u
#define NEW_HDR 48u
#define NEW_ENTRY 24u

static uint32_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static uint64_t rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

/* The string at off in [base, base + size), or NULL when it does not end
 * there. */
static const char *str_at(const unsigned char *base, size_t size, uint32_t off)
{
    if (off >= size || !memchr(base + off, '\0', size - off))
        return NULL;
    return (const char *)base + off;
}

static int entries_each(const unsigned char *ent, uint32_t n, size_t stride,
                        const unsigned char *strs, size_t strsize, const char *name,
                        int (*fn)(const char *, void *), void *ctx)
{
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *e = ent + (size_t)i * stride;
        uint32_t type = rd32(e) & 0xffu;
        if (type != 1 && type != 3)
            continue;
        if (stride == NEW_ENTRY && rd64(e + 16) != 0)
            continue;
        const char *k = str_at(strs, strsize, rd32(e + 4));
        const char *v = str_at(strs, strsize, rd32(e + 8));
        if (!k || !v || v[0] != '/' || strcmp(k, name) != 0)
            continue;
        int rc = fn(v, ctx);
        if (rc)
            return rc;
    }
    return 0;
}

int libpath_cache_each(const void *buf, size_t len, const char *name,
                       int (*fn)(const char *path, void *ctx), void *ctx)
{
    const unsigned char *b = buf;
    size_t at = 0;
    if (len >= NEW_HDR && memcmp(b, NEW_MAGIC, sizeof(NEW_MAGIC) - 1) == 0) {
        at = 0;
    } else if (len >= OLD_HDR && memcmp(b, OLD_MAGIC, sizeof(OLD_MAGIC) - 1) == 0) {
        uint32_t n = rd32(b + 12);
        if (n > (len - OLD_HDR) / OLD_ENTRY)
            return 0;
        size_t end = OLD_HDR + (size_t)n * OLD_ENTRY;
        at = (end + 7) & ~(size_t)7;
        if (at > len || len - at < NEW_HDR ||
            memcmp(b + at, NEW_MAGIC, sizeof(NEW_MAGIC) - 1) != 0)
            return entries_each(b + OLD_HDR, n, OLD_ENTRY, b + end, len - end, name, fn, ctx);
    } else {
        return 0;
    }
    const unsigned char *h = b + at;
    size_t size = len - at;
    uint32_t n = rd32(h + 20);
    if (n > (size - NEW_HDR) / NEW_ENTRY)
        return 0;
    return entries_each(h + NEW_HDR, n, NEW_ENTRY, h, size, name, fn, ctx);
}

/* The cache file's bytes (free them), or NULL: absent, unreadable, not a
 * regular file, or past CACHE_MAX. */
static unsigned char *cache_read(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return NULL;
    unsigned char *buf = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > CACHE_MAX)
        goto fail;
    buf = malloc((size_t)st.st_size);
    if (!buf)
        goto fail;
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break; /* shorter than it was: what was read is parsed, bounded */
        got += (size_t)r;
    }
    close(fd);
    *len = got;
    return buf;
fail:
    free(buf);
    close(fd);
    return NULL;
}

/* ---- the search ---- */

struct hit {
    const char *name;
    char *out;
    size_t outlen;
};

static int take(struct hit *h, const char *path)
{
    if (!usable(path))
        return 0;
    if (snprintf(h->out, h->outlen, "%s", path) >= (int)h->outlen)
        return 0;
    return 1;
}

static int env_dir(const char *dir, size_t len, void *ctx)
{
    struct hit *h = ctx;
    char path[4096];
    if (snprintf(path, sizeof(path), "%.*s/%s", (int)len, dir, h->name) >= (int)sizeof(path))
        return 0;
    return take(h, path);
}

static int cache_entry(const char *path, void *ctx)
{
    return take(ctx, path);
}

static const char *find(const struct libpath_sys *sys, const char *name, unsigned where,
                        char *out, size_t outlen)
{
    if (!name[0] || strchr(name, '/'))
        return NULL;
    struct hit h = {name, out, outlen};
    if ((where & LIBPATH_ENV) && env_each(sys->ld_library_path, sys->secure, env_dir, &h))
        return "LD_LIBRARY_PATH";
    if (!(where & LIBPATH_SYSTEM))
        return NULL;
    size_t len = 0;
    unsigned char *cache = cache_read(sys->cache, &len);
    int rc = cache ? libpath_cache_each(cache, len, name, cache_entry, &h) : 0;
    free(cache);
    if (rc)
        return "the ld.so cache";
    for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++) {
        char path[4096];
        if (snprintf(path, sizeof(path), "%s%s/%s", sys->root, system_dirs[i], name) <
                (int)sizeof(path) &&
            take(&h, path))
            return system_dirs[i];
    }
    return NULL;
}

int libpath_find_in(const struct libpath_sys *sys, const char *name, unsigned where, char *out,
                    size_t outlen)
{
    const char *from = find(sys, name, where, out, outlen);
    if (from)
        debuglog_printf("library %s -> %s (%s)", name, out, from);
    else
        debuglog_printf("library %s -> not found", name);
    return from ? 0 : -1;
}

int libpath_find(const char *name, unsigned where, char *out, size_t outlen)
{
    const struct libpath_sys sys = {.ld_library_path = getenv("LD_LIBRARY_PATH"),
                                    .secure = getauxval(AT_SECURE) != 0,
                                    .cache = LDSO_CACHE,
                                    .root = ""};
    return libpath_find_in(&sys, name, where, out, outlen);
}

static void *open_path(const char *path, char *err, size_t errlen)
{
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(err, errlen, "%s", e ? e : "dlopen failed");
    }
    debuglog_printf("dlopen %s -> %s", path, h ? "loaded" : err);
    return h;
}

void *libpath_open(const char *soname, char *path, size_t pathlen, char *err, size_t errlen)
{
    char found[4096];
    if (libpath_find(soname, LIBPATH_ENV | LIBPATH_SYSTEM, found, sizeof(found)) != 0) {
        snprintf(err, errlen, "%s: not in LD_LIBRARY_PATH, the ld.so cache or the system's "
                              "library directories", soname);
        return NULL;
    }
    if (path)
        snprintf(path, pathlen, "%s", found);
    return open_path(found, err, errlen);
}

void *libpath_open_file(const char *file, char *err, size_t errlen)
{
    char here[4096];
    if (!strchr(file, '/')) {
        snprintf(here, sizeof(here), "./%s", file);
        file = here;
    }
    return open_path(file, err, errlen);
}

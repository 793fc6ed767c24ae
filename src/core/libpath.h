/*
 * libpath.h — where a vendor library is, found as the dynamic linker finds
 * a bare soname, but never in the current directory.
 *
 * dlopen("libnvidia-ml.so.1") searches LD_LIBRARY_PATH, where an empty
 * entry (":", "/x:", what "LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/x" makes when
 * it was unset) or a relative one (".", "lib") is the current directory:
 * a library planted there runs its constructors in our process. Every
 * loader (NVML, DCGM, libcurl, libmicrohttpd, libnghttp2, libprotobuf-c)
 * therefore asks here for an absolute path and dlopens that.
 *
 * The search, in the dynamic linker's order: the absolute directories of
 * LD_LIBRARY_PATH (none when the program runs set-user-ID: AT_SECURE, as
 * ld.so does), the entries of /etc/ld.so.cache (parsed here; ldconfig is
 * never run), then the system's library directories (/lib/TRIPLET,
 * /usr/lib/TRIPLET, /lib64, /usr/lib64, /lib, /usr/lib). A file of another
 * ELF class or machine (a 32-bit library in /usr/lib) is passed over, as
 * ld.so does; the first other file found is the answer, even one that will
 * not load (ld.so stops there too, with its error). docs/decisions.md.
 */
#ifndef MIGMON_LIBPATH_H
#define MIGMON_LIBPATH_H

#include <stdbool.h>
#include <stddef.h>

/* Where to look (libpath_find's where). */
#define LIBPATH_ENV 1u    /* the absolute directories of LD_LIBRARY_PATH */
#define LIBPATH_SYSTEM 2u /* the ld.so cache, then the system's directories */

/* The first usable file called name (a soname, no '/'): 0 with its absolute
 * path in out, or -1 when there is none (or name has a '/'). */
int libpath_find(const char *name, unsigned where, char *out, size_t outlen);

/*
 * dlopen(RTLD_NOW | RTLD_LOCAL) of the library found for soname. NULL when
 * none is found ("SONAME: not in LD_LIBRARY_PATH, the ld.so cache or the
 * system's library directories") or it does not load (dlerror's text),
 * with that reason in err. The path opened goes to path when path is not
 * NULL.
 */
void *libpath_open(const char *soname, char *path, size_t pathlen, char *err, size_t errlen);

/* dlopen of a file the user named (--nvml-path, --dcgm-lib): a name without
 * a '/' is the file in the current directory (dlopen would search for it
 * instead). NULL with dlerror's text in err. */
void *libpath_open_file(const char *file, char *err, size_t errlen);

/* Calls fn with each absolute directory of LD_LIBRARY_PATH, in order (its
 * text and length; not NUL-terminated), until fn returns non-zero; returns
 * that value, or 0. None when AT_SECURE. */
int libpath_env_each(int (*fn)(const char *dir, size_t len, void *ctx), void *ctx);

/* ---- for tests ---- */

/* What the search reads, given: LD_LIBRARY_PATH's value (NULL: unset),
 * whether the program is set-user-ID, the cache file, and a prefix put
 * before each system directory ("" for the real ones). */
struct libpath_sys {
    const char *ld_library_path;
    bool secure;
    const char *cache;
    const char *root;
};

int libpath_find_in(const struct libpath_sys *sys, const char *name, unsigned where, char *out,
                    size_t outlen);

/* The cache's entries for name, in order, each an absolute path of a
 * library for glibc's ELF ABI with no hardware-capability subdirectory
 * (another CPU's build); fn returns non-zero to stop, and that value is
 * returned (0: all seen). buf is the cache file's bytes, untrusted: an
 * entry outside it is skipped, a header that is not a cache's gives none. */
int libpath_cache_each(const void *buf, size_t len, const char *name,
                       int (*fn)(const char *path, void *ctx), void *ctx);

#endif

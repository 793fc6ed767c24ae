/*
 * terminfo_builtin.c — the built-in terminfo entries. See terminfo_builtin.h.
 */
#include "tui/terminfo_builtin.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* TERMINFO before install: restored by remove. */
static char saved_terminfo[PATH_MAX];
static int had_terminfo;

const struct terminfo_entry *terminfo_builtin_find(const char *name)
{
    if (!name || !*name)
        return NULL;
    for (size_t i = 0; i < terminfo_builtin_count; i++)
        if (strcmp(terminfo_builtin[i].name, name) == 0)
            return &terminfo_builtin[i];
    return NULL;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* dir/sub/name of the entry, undone in reverse by remove_tree. */
static int write_entry(const char *dir, const struct terminfo_entry *e)
{
    char sub[PATH_MAX], file[PATH_MAX];
    const char *slash = strchr(e->path, '/');
    if (!slash || snprintf(sub, sizeof(sub), "%s/%.*s", dir, (int)(slash - e->path), e->path) >=
                      (int)sizeof(sub) ||
        snprintf(file, sizeof(file), "%s/%s", dir, e->path) >= (int)sizeof(file))
        return -1;
    if (mkdir(sub, 0700) != 0)
        return -1;
    int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = write_all(fd, e->data, e->len);
    if (close(fd) != 0)
        rc = -1;
    return rc;
}

static void remove_tree(const char *dir, const struct terminfo_entry *e)
{
    char path[PATH_MAX];
    const char *slash = e ? strchr(e->path, '/') : NULL;
    if (e && snprintf(path, sizeof(path), "%s/%s", dir, e->path) < (int)sizeof(path))
        unlink(path);
    if (slash && snprintf(path, sizeof(path), "%s/%.*s", dir, (int)(slash - e->path), e->path) <
                     (int)sizeof(path))
        rmdir(path);
    rmdir(dir);
}

int terminfo_builtin_install(char *dir, size_t dirlen)
{
    const struct terminfo_entry *e = terminfo_builtin_find(getenv("TERM"));
    if (!e)
        return -1;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || tmp[0] != '/')
        tmp = "/tmp";
    if (snprintf(dir, dirlen, "%s/mig-gpu-mon-terminfo.XXXXXX", tmp) >= (int)dirlen ||
        !mkdtemp(dir))
        return -1;
    if (write_entry(dir, e) != 0) {
        remove_tree(dir, e);
        return -1;
    }
    const char *old = getenv("TERMINFO");
    had_terminfo = old && snprintf(saved_terminfo, sizeof(saved_terminfo), "%s", old) <
                              (int)sizeof(saved_terminfo);
    if (setenv("TERMINFO", dir, 1) != 0) {
        remove_tree(dir, e);
        return -1;
    }
    return 0;
}

void terminfo_builtin_remove(const char *dir)
{
    remove_tree(dir, terminfo_builtin_find(getenv("TERM")));
    if (had_terminfo)
        setenv("TERMINFO", saved_terminfo, 1);
    else
        unsetenv("TERMINFO");
}

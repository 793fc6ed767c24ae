"""A file whose reads hang: the stand-in for a sysfs attribute of a hung
GPU, whose read sleeps in the driver beyond any signal.

    hangfs.py MOUNTPOINT HOLD DATA

mounts (FUSE) over the regular file MOUNTPOINT a regular file with DATA's
bytes; a read of it waits while the file HOLD exists, then answers. Runs
until unmounted (fusermount3 -u MOUNTPOINT)."""
import errno
import os
import stat
import sys
import time

from fusepy import FUSE, FuseOSError, Operations

MNT, HOLD = sys.argv[1], sys.argv[2]
with open(sys.argv[3], "rb") as f:
    DATA = f.read()


class Hung(Operations):
    def getattr(self, path, fh=None):
        if path != "/":
            raise FuseOSError(errno.ENOENT)
        # sysfs says 4096 for every attribute
        return dict(st_mode=stat.S_IFREG | 0o444, st_nlink=1, st_size=4096)

    def open(self, path, flags):
        return 0

    def read(self, path, size, offset, fh):
        while os.path.exists(HOLD):
            time.sleep(0.02)
        return DATA[offset : offset + size]


# nonempty: the mount point is the attribute's own file
FUSE(Hung(), MNT, foreground=True, direct_io=True, nonempty=True)

#!/usr/bin/env python3
"""A slow disk for tests: a FUSE file system that passes everything through to a backing directory, except that
every fsync (of a file or a directory) takes a fixed time first, as on a saturated or failing disk.

    slow_fs.py BACKING MOUNTPOINT FSYNC_SECONDS

Runs in the foreground until unmounted (umount MOUNTPOINT). Needs python3-fusepy and /dev/fuse (root).
"""

import errno
import os
import sys
import time

import fusepy


class SlowFS(fusepy.Operations):
    def __init__(self, backing, delay):
        self.backing = os.path.realpath(backing)
        self.delay = delay

    def _path(self, path):
        return os.path.join(self.backing, path.lstrip("/"))

    # Metadata

    def getattr(self, path, fh=None):
        st = os.lstat(self._path(path))
        keys = ("st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime", "st_nlink", "st_size", "st_uid")
        return {key: getattr(st, key) for key in keys}

    def access(self, path, mode):
        if not os.access(self._path(path), mode):
            raise fusepy.FuseOSError(errno.EACCES)

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._path(path))

    def mkdir(self, path, mode):
        return os.mkdir(self._path(path), mode)

    def rmdir(self, path):
        return os.rmdir(self._path(path))

    def unlink(self, path):
        return os.unlink(self._path(path))

    def rename(self, old, new):
        return os.rename(self._path(old), self._path(new))

    def chmod(self, path, mode):
        return os.chmod(self._path(path), mode)

    def chown(self, path, uid, gid):
        return os.chown(self._path(path), uid, gid)

    def truncate(self, path, length, fh=None):
        with open(self._path(path), "r+b") as f:
            f.truncate(length)

    def utimens(self, path, times=None):
        return os.utime(self._path(path), times)

    def statfs(self, path):
        st = os.statvfs(self._path(path))
        keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag",
                "f_frsize", "f_namemax")
        return {key: getattr(st, key) for key in keys}

    # Files

    def open(self, path, flags):
        return os.open(self._path(path), flags)

    def opendir(self, path):
        return os.open(self._path(path), os.O_RDONLY | os.O_DIRECTORY)

    def releasedir(self, path, fh):
        return os.close(fh)

    def create(self, path, mode, fi=None):
        return os.open(self._path(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)

    def read(self, path, length, offset, fh):
        return os.pread(fh, length, offset)

    def write(self, path, data, offset, fh):
        return os.pwrite(fh, data, offset)

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        return os.close(fh)

    def fsync(self, path, datasync, fh):
        time.sleep(self.delay)
        return os.fsync(fh)

    def fsyncdir(self, path, datasync, fh):
        time.sleep(self.delay)
        return 0


if __name__ == "__main__":
    backing, mountpoint, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
    fusepy.FUSE(SlowFS(backing, delay), mountpoint, foreground=True, nothreads=False, allow_other=True,
                default_permissions=True)

"""File I/O of the built-in tools: regular files only, replaced atomically.

- `open_regular` opens for reading without blocking on a FIFO or a terminal and refuses
  anything but a regular file: a FIFO would hold a worker thread forever (a thread cannot
  be cancelled), a device has no end.
- `replace_file` writes a temp file in the target's directory, fsyncs it, gives it the
  original's permission bits (and owner, where the OS lets us), and renames it over the
  target (`core/durable.py`, the one atomic write). So a crash leaves the old file or the
  new one, never half of either, and a hardlink's other names (say, a file outside the
  workspace linked into it) keep their content: the workspace name now points to a new
  inode.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from acp_plus.core.durable import fsync_dir, write_atomic

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def not_regular() -> OSError:
    """The error for a path that exists but is not a regular file."""
    return OSError(errno.EINVAL, "not a regular file")


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for binary reading; OSError unless it is a regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | _CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise not_regular()
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path) -> bytes:
    """The whole content of regular file `path`."""
    with open_regular(path) as fh:
        return fh.read()


def replace_file(path: Path, data: bytes) -> None:
    """Make `data` the content of `path` by atomic rename (see the module docstring).

    A new file gets the mode a plain create would give (0666 less the umask); an
    existing one keeps its permission bits. The directory must exist.
    """
    try:
        old: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        old = None
    if old is not None and not stat.S_ISREG(old.st_mode):
        raise not_regular()
    write_atomic(path, data, like=old)
    # Makes the rename itself durable; best effort (the workspace may be on a file
    # system that refuses a directory fsync).
    with contextlib.suppress(OSError):
        fsync_dir(path.parent)

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

from acp_plus.core.durable import create_temp, fsync_dir, write_atomic

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


def replace_file(path: Path, data: bytes, mode: int = 0o666) -> None:
    """Make `data` the content of `path` by atomic rename (see the module docstring).

    A new file gets `mode` less the umask; an existing one keeps its permission bits.
    The directory must exist.
    """
    try:
        old: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        old = None
    if old is not None and not stat.S_ISREG(old.st_mode):
        raise not_regular()
    write_atomic(path, data, mode=mode, like=old)
    # Makes the rename itself durable; best effort (the workspace may be on a file
    # system that refuses a directory fsync).
    with contextlib.suppress(OSError):
        fsync_dir(path.parent)


def publish_new(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Create `path` with `data`, never replacing a file that appeared meanwhile: the
    content is written and fsynced under a temp name beside it, then hard-linked to
    `path` (FileExistsError when `path` exists by then) and the temp name removed. A
    reader sees no file or the whole file, and a concurrent creator's file is kept."""
    temp, fd = create_temp(path, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.link(temp, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
    with contextlib.suppress(OSError):
        fsync_dir(path.parent)

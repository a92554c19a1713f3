"""Durable writes: a file replaced whole through a temp file, and a directory fsync.

The one implementation of the pattern three writers need: the session store (a new
log's header, `store.py`), the attachment store (each image, `attachments.py`) and the
built-in `write` / `edit` tools (`tools/fileio.py`). A crash leaves the old content or
the new, never part of either.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NAME_ROOM = 200  # leaves room for the temp name's prefix and suffix within NAME_MAX


def write_atomic(
    path: Path, data: bytes, *, mode: int = 0o666, like: os.stat_result | None = None
) -> None:
    """Make `data` the content of `path`: write a temp file beside it, fsync it, rename it
    over `path`. On failure the temp file is removed and `path` is untouched.

    The temp file is created with `mode` (less the umask); `like`, an existing file's
    stat, gives it that file's owner (where the OS lets us) and permission bits instead.
    The directory is not fsynced here: call `fsync_dir` once after the write, or after a
    batch of them.
    """
    temp, fd = create_temp(path, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if like is not None:
                # chown before chmod: changing the owner clears setuid/setgid bits.
                with contextlib.suppress(OSError):
                    os.fchown(fh.fileno(), like.st_uid, like.st_gid)
                os.fchmod(fh.fileno(), stat.S_IMODE(like.st_mode))
            os.fsync(fh.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def fsync_dir(directory: Path) -> None:
    """Make `directory`'s entries durable (a rename, a new file), not only the files'
    contents. Raises OSError; some file systems refuse it, so callers writing where the
    user points may suppress that."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_temp(path: Path, mode: int) -> tuple[Path, int]:
    """A new temp file beside `path` (random name, `O_EXCL`), its path and open fd."""
    # O_EXCL with a random name: never an existing file, never someone's symlink.
    for _ in range(100):
        temp = path.with_name(f".{path.name[:_NAME_ROOM]}.{secrets.token_hex(4)}.tmp")
        try:
            return temp, os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, mode)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(path.parent))

"""Files under the run's workdir, opened so that no path an agent gives leaves it.

The client's `fs/read_text_file` and `fs/write_text_file` answers used to check a path
with `realpath` and then open it by name: an agent swapping a directory for a symlink
between the two got files written outside the workdir. Here nothing is resolved by
name: the path is made relative to the workdir lexically (`..` that climbs out of it is
refused), then opened one component at a time relative to a directory handle, each with
`O_NOFOLLOW` (a symlink anywhere is refused, whenever it appears), the file itself
non-blocking (a FIFO cannot hang the harness) and only when it is a regular file with
one link (a hard link to a file elsewhere is refused too). A refusal because of a link
is the agent's doing (`Escape`): the answer says so, and so does a run problem.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import stat
from collections.abc import Sequence

READ_LIMIT = 16 * 1024 * 1024
"""Bytes of a file `fs/read_text_file` serves: a bigger one is an error, not memory."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Escape(Exception):
    """The path went through a link out of the workdir's tree (the agent's doing)."""


class Refused(Exception):
    """The path is no regular file the client serves (a directory, a FIFO, too big)."""


def parts_below(path: str, root: str) -> list[str] | None:
    """`path`'s components below `root` (both absolute), `..` applied lexically; None
    when it is not below `root`. Lexical is exact here: no link is ever followed."""
    norm = posixpath.normpath(path)
    base = posixpath.normpath(root)
    if not norm.startswith(base.rstrip("/") + "/"):
        return None
    return [p for p in norm[len(base) :].split("/") if p]


def _enter(dirfd: int, name: str, create: bool) -> int:
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=dirfd)
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dirfd)
    except OSError as exc:
        if exc.errno == errno.ELOOP or _is_link(dirfd, name):
            raise Escape(f"{name} is a symbolic link") from None
        raise


def _is_link(dirfd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dirfd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _open_file(root: str, parts: Sequence[str], write: bool) -> int:
    """An fd of the file at `parts` below `root`, checked as the module doc says."""
    dirfd = os.open(root, _DIR_FLAGS)
    try:
        for name in parts[:-1]:
            inner = _enter(dirfd, name, create=write)
            os.close(dirfd)
            dirfd = inner
        flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        flags |= os.O_WRONLY | os.O_CREAT if write else os.O_RDONLY
        try:
            fd = os.open(parts[-1], flags, 0o644, dir_fd=dirfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise Escape(f"{parts[-1]} is a symbolic link") from None
            raise
    finally:
        os.close(dirfd)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise Refused("not a regular file")
    if info.st_nlink > 1:
        os.close(fd)
        raise Escape(f"{parts[-1]} has {info.st_nlink} hard links")
    return fd


def write_below(root: str, parts: Sequence[str], text: str) -> None:
    """Write `text` (UTF-8) to the file at `parts` below `root`, making directories."""
    if not parts:
        raise Refused("not a regular file")
    fd = _open_file(root, parts, write=True)
    try:
        os.ftruncate(fd, 0)
        data = memoryview(text.encode("utf-8"))
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)


def read_below(root: str, parts: Sequence[str]) -> str:
    """The text (UTF-8) of the file at `parts` below `root`."""
    if not parts:
        raise Refused("not a regular file")
    fd = _open_file(root, parts, write=False)
    try:
        if os.fstat(fd).st_size > READ_LIMIT:
            raise Refused(f"larger than {READ_LIMIT} bytes")
        chunks: list[bytes] = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            if sum(map(len, chunks)) > READ_LIMIT:
                raise Refused(f"larger than {READ_LIMIT} bytes")
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8")

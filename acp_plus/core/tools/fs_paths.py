"""Where native's file tools act and what they remember: a path's display spelling and
its identity, a file's version, the per-session observations behind the read-before-edit
and stale-version rules, and the file sandbox's writable roots.

- **Display path and target key.** A relative `file_path` is taken from the session's
  cwd. The display path is that spelling made absolute (normalized, unless it walks up
  with `..`, which is then kept as written so a symlinked cwd's parent is the physical
  one); errors name it. The target key is its real path (a missing file: the real path
  of its nearest existing ancestor plus the missing rest); results name it, and
  observations are keyed by it, so two spellings of one file share them.
- **Version.** `dev:ino:size:mtime_ns:ctime_ns` of the file (symlinks followed): any
  write, by anyone, changes it.
- **Observations** (native's fs-observation-policy), per session: a `read` records the
  version it saw (or that the file was absent), a `write` or `edit` the version it left.
  An `edit` needs one; a `write` over an existing file needs one that is present; both
  are refused when the file's version is no longer the one recorded.
- **Writable roots** under `workspace-write`: the session's cwd, `/tmp` and the
  platform temp directory, each as its real path.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path

from acp_plus.core.tools.fs_text import FsError, has_parent_segment


@dataclass(frozen=True)
class Target:
    """A resolved `file_path`: how errors spell it and which file it is."""

    display: str
    key: str


@dataclass(frozen=True)
class Info:
    """What one stat of a target says."""

    version: str
    kind: str  # file | directory | other
    mode: int


def display_path(cwd: str, path: str) -> str:
    """The absolute spelling of `path` that native's errors show."""
    raw = path if path.startswith("/") else f"{cwd}/{path}"
    if has_parent_segment(raw):
        return raw
    joined = posixpath.normpath(posixpath.join(cwd, path))
    # Node's path.resolve folds a leading "//" that POSIX normpath keeps.
    return "/" + joined.lstrip("/") if joined.startswith("//") else joined


def resolve_target(cwd: str, path: str) -> Target:
    """`path` (relative to `cwd`) as a `Target`; native's refusals for a path that runs
    through a file or walks up through a missing directory."""
    display = display_path(cwd, path)
    try:
        return Target(display, os.path.realpath(display, strict=True))
    except NotADirectoryError:
        raise FsError(
            f'cannot resolve "{display}": a parent path segment is not a directory',
            "FS_NOT_FOUND",
        ) from None
    except FileNotFoundError:
        pass
    missing = [posixpath.basename(display)]
    ancestor = posixpath.dirname(display)
    while True:
        try:
            real = os.path.realpath(ancestor, strict=True)
        except FileNotFoundError:
            parent = posixpath.dirname(ancestor)
            if parent == ancestor:
                return Target(display, display)
            missing.insert(0, posixpath.basename(ancestor))
            ancestor = parent
            continue
        if ".." in missing:
            raise FsError(
                f'cannot resolve "{display}": parent traversal crosses a missing directory',
                "FS_NOT_FOUND",
            )
        return Target(display, posixpath.join(real, *missing))


def probe(key: str) -> Info | None:
    """The target's version, kind and permission bits; None when it does not exist."""
    try:
        st = os.stat(key)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise
    if stat.S_ISREG(st.st_mode):
        kind = "file"
    elif stat.S_ISDIR(st.st_mode):
        kind = "directory"
    else:
        kind = "other"
    version = f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"
    return Info(version, kind, st.st_mode & 0o777)


@dataclass(frozen=True)
class Seen:
    """One observation: the version a session saw, or None when it saw no file."""

    version: str | None


class Observations:
    """What each session has seen of each file (by target key), in memory only: a
    session brought back in a new process starts with none, as on native."""

    def __init__(self) -> None:
        self._seen: dict[str, dict[str, Seen]] = {}

    def get(self, session: str, key: str) -> Seen | None:
        """The session's last observation of the file, if any."""
        return self._seen.get(session, {}).get(key)

    def record(self, session: str, key: str, version: str | None) -> None:
        """Remember what the session now knows of the file."""
        self._seen.setdefault(session, {})[key] = Seen(version)


def _canonical(path: str) -> str:
    try:
        return os.path.realpath(path, strict=True)
    except OSError:
        return path


def node_tmpdir() -> str:
    """Node's `os.tmpdir()`: `TMPDIR`, `TMP` or `TEMP`, else `/tmp`, no trailing slash."""
    for name in ("TMPDIR", "TMP", "TEMP"):
        value = os.environ.get(name)
        if value:
            return value[:-1] if len(value) > 1 and value.endswith("/") else value
    return "/tmp"


def writable_roots(workspace: Path) -> tuple[str, ...]:
    """Where `workspace-write` lets `write` and `edit` act, as real paths."""
    roots: list[str] = []
    for root in (str(workspace), "/tmp", node_tmpdir()):
        real = _canonical(root)
        if real not in roots:
            roots.append(real)
    return tuple(roots)


def is_under(key: str, root: str) -> bool:
    """Whether `key` is `root` or below it: by spelling, else by the identity of an
    existing ancestor (another spelling of the same directory)."""
    prefix = root if root.endswith("/") else root + "/"
    if key == root or key.startswith(prefix):
        return True
    try:
        root_st = os.stat(root)
    except OSError:
        return False
    ancestor = key
    while True:
        try:
            st = os.stat(ancestor)
            if (st.st_dev, st.st_ino) == (root_st.st_dev, root_st.st_ino):
                return True
        except OSError:
            pass
        parent = posixpath.dirname(ancestor)
        if parent == ancestor:
            return False
        ancestor = parent


__all__ = [
    "Info",
    "Observations",
    "Seen",
    "Target",
    "display_path",
    "is_under",
    "node_tmpdir",
    "probe",
    "resolve_target",
    "writable_roots",
]

"""Durable session logs: one JSON-lines file per session under `<home>/sessions/`.

Line 1 is the header; every later line is one committed event. A commit is written as a
single line and fsynced before `append` returns, so a crash (even `kill -9`) loses at
most the event being written. A torn last line (a crash mid-write) is ignored when
reading and cut off before the next append, so the file stays well formed.

One writer per session: a live session holds an exclusive `flock` on `<id>.lock` next to
its log (`SessionLog.acquire`, from session/new or resume until close). The lock dies
with its process, so a lock file a crash leaves behind never blocks. Reading (listing,
`open`) takes no lock. Independently of the lock, an append never cuts off complete
events another writer committed after this log was read: it fails instead.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import time
import uuid
import weakref
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acp_plus.core.durable import fsync_dir, write_atomic

_UUID_RE = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)


class StoreError(Exception):
    """A session log cannot be created, read or written."""


class InvalidSessionId(StoreError, ValueError):
    """A session id is not of UUID form (and so must never become a path)."""


class UnknownSession(StoreError, KeyError):
    """No log exists for the session id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown session"


class SessionLocked(StoreError):
    """Another process holds the session's write lock (the session is live there)."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session is already active in another process: {session_id}")
        self.session_id = session_id


def validate_session_id(session_id: object) -> str:
    """Return `session_id` if it is a UUID string, else raise `InvalidSessionId`.

    Ids arrive from clients (resume, load); checking the form before any path is built
    is what keeps `../../x` out of the file system.
    """
    if not isinstance(session_id, str) or not _UUID_RE.match(session_id):
        raise InvalidSessionId(f"invalid session id (expected a UUID): {session_id!r}")
    return session_id


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _lock_exclusive(path: Path, session_id: str) -> int:
    """Take the exclusive, non-blocking `flock` on `path`; returns the open descriptor.

    Raises `SessionLocked` when another open file holds it. The file is unlinked on
    release, so after locking the descriptor must still be the file at `path` (else a
    releaser unlinked it between our open and our lock: retry on the new file).
    """
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise StoreError(f"cannot open session lock {path}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise SessionLocked(session_id) from None
            raise StoreError(f"cannot lock session {session_id}: {exc}") from exc
        try:
            on_disk = os.stat(path)
        except FileNotFoundError:
            os.close(fd)
            continue
        mine = os.fstat(fd)
        if (on_disk.st_dev, on_disk.st_ino) == (mine.st_dev, mine.st_ino):
            return fd
        os.close(fd)


def _unlock(path: Path, fd: int) -> None:
    # Unlink while still holding it: a waiter that opened this file then sees a
    # different file at the path and retries (see `_lock_exclusive`).
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)
    os.close(fd)


def parse_log(data: bytes) -> tuple[list[dict[str, Any]], int]:
    """Parse a log file's bytes into its JSON objects and the length of the valid prefix.

    Only the last line may be torn (no newline, or not JSON); earlier damage is a real
    corruption and raises `StoreError`.
    """
    objects: list[dict[str, Any]] = []
    offset = 0
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        is_last = i == len(lines) - 1
        if is_last and line == b"":
            break
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            if is_last or (i == len(lines) - 2 and lines[-1] == b""):
                # The newline may have landed before the crash; the line is still torn.
                break
            raise StoreError(f"corrupt session log at line {i + 1}: {exc}") from exc
        if is_last:
            # Valid JSON but no terminating newline: the write did not finish.
            break
        objects.append(obj)
        offset += len(line) + 1
    return objects, offset


class SessionLog:
    """The append-only event log of one session."""

    def __init__(
        self, path: Path, header: dict[str, Any], events: list[dict[str, Any]], valid_len: int
    ):
        self._path = path
        self._header = header
        self._events = events
        self._valid_len = valid_len
        self._repaired = False
        self._unlock: weakref.finalize[[Path, int], SessionLog] | None = None

    @property
    def lock_path(self) -> Path:
        """The session's lock file, next to the log."""
        return self._path.with_suffix(".lock")

    @property
    def locked(self) -> bool:
        """Whether this log holds the session's write lock."""
        return self._unlock is not None and self._unlock.alive

    def acquire(self, *, reload: bool = True) -> None:
        """Become the session's one writer: take its lock, then re-read the log.

        Raises `SessionLocked` if another process holds it. Re-reading under the lock
        means events another writer committed since `open` are seen, not overwritten.
        Idempotent; `release`, dropping the last reference, or the process's death
        gives the lock up.
        """
        if self.locked:
            return
        fd = _lock_exclusive(self.lock_path, self.id)
        try:
            if reload:
                self._reload()
        except BaseException:
            _unlock(self.lock_path, fd)
            raise
        self._unlock = weakref.finalize(self, _unlock, self.lock_path, fd)

    def release(self) -> None:
        """Give up the write lock (no-op when not held); the lock file is removed."""
        if self._unlock is not None:
            self._unlock()

    def _reload(self) -> None:
        try:
            data = self._path.read_bytes()
        except OSError as exc:
            raise StoreError(f"cannot read session log {self._path}: {exc}") from exc
        objects, valid_len = parse_log(data)
        first = objects[0] if objects else {}
        if first.get("type") != "header" or first.get("id") != self._header.get("id"):
            raise StoreError(f"session log has no header: {self._path}")
        self._header = objects[0]
        self._events = objects[1:]
        self._valid_len = valid_len
        self._repaired = False

    @property
    def id(self) -> str:
        """The session id."""
        return str(self._header["id"])

    @property
    def header(self) -> dict[str, Any]:
        """The header line (a copy)."""
        return dict(self._header)

    @property
    def path(self) -> Path:
        """Where the log lives."""
        return self._path

    def events(self) -> list[dict[str, Any]]:
        """The committed events, in commit order (a shallow copy of the list)."""
        return list(self._events)

    def append(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """Commit one event: add `seq` and `at`, write one line, flush and fsync.

        Returns the committed event. Raises `StoreError` if the write fails, in which
        case the event is not part of the log.
        """
        committed = dict(event)
        committed["seq"] = (self._events[-1]["seq"] + 1) if self._events else 1
        committed["at"] = _now_iso()
        line = (json.dumps(committed, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        try:
            with open(self._path, "r+b") as fh:
                if not self._repaired:
                    # Cut a torn tail left by a crash so the new line starts clean, but
                    # never complete events someone else committed since we read.
                    _, on_disk = parse_log(fh.read())
                    if on_disk != self._valid_len:
                        raise StoreError(self._changed())
                    fh.truncate(self._valid_len)
                    self._repaired = True
                elif os.fstat(fh.fileno()).st_size != self._valid_len:
                    raise StoreError(self._changed())
                fh.seek(self._valid_len)
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            self._repaired = False  # a partial line is a torn tail: cut it next time
            raise StoreError(f"cannot append to session log {self._path}: {exc}") from exc
        self._valid_len += len(line)
        self._events.append(committed)
        return committed

    def sync(self) -> None:
        """A durability checkpoint: everything committed so far is on disk (each
        `append` already fsyncs; this syncs the file once more, for a caller that must
        not go on before it, as native's round driver does). Raises `StoreError`."""
        try:
            fd = os.open(self._path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise StoreError(f"cannot sync session log {self._path}: {exc}") from exc

    def _changed(self) -> str:
        return (
            f"session log {self._path} was written by another process since it was read; "
            "not appending (reopen the session)"
        )


class SessionStore:
    """All session logs under `<home>/sessions/`."""

    def __init__(self, home: Path):
        self._dir = Path(home) / "sessions"

    @property
    def directory(self) -> Path:
        """The folder holding the logs."""
        return self._dir

    def _path(self, session_id: str) -> Path:
        return self._dir / f"{validate_session_id(session_id)}.jsonl"

    def create(self, cwd: str, origin: str = "acp") -> SessionLog:
        """Create a new session with a random UUID v4 id; durable before returning.

        The new log holds the session's write lock (taken before the file appears, so
        no other process can resume the session in between).
        """
        self._dir.mkdir(parents=True, exist_ok=True)
        session_id = str(uuid.uuid4())
        header = {
            "type": "header",
            "id": session_id,
            "cwd": cwd,
            "createdAt": int(time.time() * 1000),
            "origin": origin,
        }
        line = (json.dumps(header, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        path = self._path(session_id)
        log = SessionLog(path, header, [], len(line))
        log.acquire(reload=False)
        try:
            # Renamed into place, so a listing never sees a header-less file.
            write_atomic(path, line)
            fsync_dir(self._dir)
        except OSError as exc:
            log.release()
            raise StoreError(f"cannot create session log {path}: {exc}") from exc
        return log

    def exists(self, session_id: str) -> bool:
        """Whether a log exists for the (validated) id."""
        return self._path(session_id).is_file()

    def open(self, session_id: str) -> SessionLog:
        """Open an existing log and read its events (a torn last line is dropped)."""
        path = self._path(session_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise UnknownSession(f"unknown session: {session_id}") from None
        except OSError as exc:
            raise StoreError(f"cannot read session log {path}: {exc}") from exc
        objects, valid_len = parse_log(data)
        if not objects or objects[0].get("type") != "header":
            raise StoreError(f"session log has no header: {path}")
        return SessionLog(path, objects[0], objects[1:], valid_len)

    def headers(self) -> list[dict[str, Any]]:
        """The headers of every readable log, in no particular order.

        A log whose first line is unreadable is skipped: one damaged file must not
        break listing the others.
        """
        if not self._dir.is_dir():
            return []
        out: list[dict[str, Any]] = []
        for path in self._dir.glob("*.jsonl"):
            if not _UUID_RE.match(path.stem):
                continue
            try:
                with open(path, "rb") as fh:
                    first = fh.readline()
                header = json.loads(first)
            except (OSError, ValueError):
                continue
            if (
                isinstance(header, dict)
                and header.get("type") == "header"
                and first.endswith(b"\n")
            ):
                out.append(header)
        return out

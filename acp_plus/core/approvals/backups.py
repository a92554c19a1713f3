"""Backups of the files `write` and `edit` change, and `/undo` (edge: reads and writes files).

Before a `write` or `edit` runs, the bytes of its file are copied into the session's
backup directory (`<home>/backups/<session>/<n>`); once the call has succeeded,
`backup/saved` is committed with the file's digest before and after. `/undo` restores
the saved bytes exactly (or removes a file the write created) only while the file still
has the digest the call left, so it never overwrites a later change. Changes made by
`bash` (or any other tool) are not covered: nothing sees what a command writes.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_plus.core.durable import fsync_dir, write_atomic

SAVED = "backup/saved"
RESTORED = "backup/restored"
FILE_TOOLS = ("write", "edit")
NOT_COVERED = (
    "Not covered: changes made by bash (or any tool other than write and edit) have no "
    "backup and cannot be undone."
)


class BackupFailed(Exception):
    """The file could not be saved (unreadable, not a regular file, over the size cap)."""


@dataclass(frozen=True)
class Pending:
    """A file saved before its tool ran; `blob` is None when the file did not exist."""

    n: int
    path: Path
    blob: Path | None
    before: str | None
    size: int


@dataclass(frozen=True)
class Entry:
    """One committed backup, as `/backups` lists it."""

    n: int
    turn: int
    call_id: str
    tool: str
    path: str
    existed: bool
    after: str | None
    undone: bool


def digest(data: bytes) -> str:
    """The digest a backup records of a file's bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _current(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def save(path: Path, directory: Path, n: int, max_bytes: int) -> Pending:
    """Copy `path`'s bytes to `directory/<n>` before a tool changes it."""
    try:
        if not path.exists():
            return Pending(n, path, None, None, 0)
        if not path.is_file():
            raise BackupFailed(f"{path} is not a regular file")
        size = path.stat().st_size
        if size > max_bytes:
            raise BackupFailed(f"{path} has {size} bytes, over the backup cap of {max_bytes}")
        data = path.read_bytes()
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        blob = directory / str(n)
        write_atomic(blob, data, mode=0o600)
        fsync_dir(directory)
    except OSError as exc:
        raise BackupFailed(f"{path}: {exc.strerror or exc}") from None
    return Pending(n, path, blob, digest(data), len(data))


def saved_event(pending: Pending, turn: int, call_id: str, tool: str) -> dict[str, Any]:
    """The `backup/saved` event once the call succeeded (the file's digest now)."""
    now = _current(pending.path)
    return {
        "type": SAVED,
        "n": pending.n,
        "turn": turn,
        "callId": call_id,
        "tool": tool,
        "path": str(pending.path),
        "existed": pending.blob is not None,
        "blob": None if pending.blob is None else pending.blob.name,
        "before": pending.before,
        "after": None if now is None else digest(now),
    }


def discard(pending: Pending) -> None:
    """Drop the copy of a call that failed (its file was not changed)."""
    if pending.blob is not None:
        pending.blob.unlink(missing_ok=True)


def entries(events: Iterable[Mapping[str, Any]]) -> list[Entry]:
    """The session's backups, oldest first, with whether each was undone."""
    found: dict[int, Entry] = {}
    for event in events:
        kind = event.get("type")
        if kind == SAVED:
            n = int(event["n"])
            found[n] = Entry(
                n,
                int(event.get("turn", 0)),
                str(event.get("callId", "")),
                str(event.get("tool", "")),
                str(event["path"]),
                bool(event.get("existed")),
                event.get("after"),
                False,
            )
        elif kind == RESTORED and int(event.get("n", 0)) in found:
            old = found[int(event["n"])]
            found[old.n] = Entry(**{**old.__dict__, "undone": True})
    return [found[n] for n in sorted(found)]


def next_number(events: Iterable[Mapping[str, Any]]) -> int:
    """The number the session's next backup gets (1-based, never reused)."""
    return max((int(e["n"]) for e in events if e.get("type") == SAVED), default=0) + 1


def list_text(found: list[Entry], cwd: Path) -> str:
    """`/backups`: one line per backup, newest first, and what is not covered."""
    if not found:
        return "No backups in this session.\n" + NOT_COVERED
    lines = ["Backups (newest first; /undo [n] restores one):"]
    for entry in reversed(found):
        what = "modified" if entry.existed else "created"
        state = " (undone)" if entry.undone else ""
        lines.append(f"  {entry.n}. {entry.tool} {what} {_shown(entry.path, cwd)}{state}")
    lines.append(NOT_COVERED)
    return "\n".join(lines)


def _shown(path: str, cwd: Path) -> str:
    p = Path(path)
    root = cwd.resolve(strict=False)
    return p.relative_to(root).as_posix() if root in p.parents else path


def pick(found: list[Entry], args: str) -> Entry | str:
    """The backup `/undo <args>` names (the newest not undone when none), or why not."""
    wanted = args.strip()
    if not wanted:
        live = [e for e in found if not e.undone]
        return live[-1] if live else "Nothing to undo in this session."
    if not wanted.isdigit():
        return f"Usage: /undo [n], n a backup number from /backups (got {wanted!r})."
    entry = next((e for e in found if e.n == int(wanted)), None)
    if entry is None:
        return f"No backup {wanted} in this session."
    if entry.undone:
        return f"Backup {entry.n} was already undone."
    return entry


def restore(entry: Entry, directory: Path, cwd: Path) -> str | None:
    """Put `entry`'s file back as it was before its call; None on success, else why not.

    Refuses a file whose bytes are no longer what the call left (changed since)."""
    path = Path(entry.path)
    now = _current(path)
    shown = _shown(entry.path, cwd)
    if (None if now is None else digest(now)) != entry.after:
        return f"Refused: {shown} changed since backup {entry.n}; it was left as it is."
    try:
        if not entry.existed:
            path.unlink(missing_ok=True)
            fsync_dir(path.parent)
            return None
        data = (directory / str(entry.n)).read_bytes()
        like = os.stat(path) if now is not None else None
        write_atomic(path, data, like=like)
        fsync_dir(path.parent)
    except OSError as exc:
        return f"Could not restore {shown}: {exc.strerror or exc}"
    return None


def restored_event(entry: Entry) -> dict[str, Any]:
    """The event that marks a backup undone."""
    return {"type": RESTORED, "n": entry.n, "path": entry.path}


def undone_text(entry: Entry, cwd: Path) -> str:
    """What `/undo` says after a restore."""
    shown = _shown(entry.path, cwd)
    if entry.existed:
        done = f"Restored {shown} to its bytes before {entry.tool} (backup {entry.n})."
    else:
        done = f"Removed {shown}, which {entry.tool} had created (backup {entry.n})."
    return f"{done}\n{NOT_COVERED}"

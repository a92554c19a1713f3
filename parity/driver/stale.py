"""What a killed harness left behind: run directories and session caches it owned.

A harness removes its run directories after each run and its session cache at the end,
unless it is killed first (`kill -9`, OOM, a closed CI runner). Each such directory
carries its owner's pid in its name (`owned_name`), so the next harness can tell a
directory whose owner is dead (removed) from one a live harness is still using (kept,
whichever user or worker it belongs to). A pid reused by an unrelated process keeps a
stale directory one more time: the safe way to be wrong.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

_OWNED = re.compile(r"^parity-p(\d+)-")


def owned_name(stem: str, pid: int | None = None) -> str:
    """`parity-p<pid>-<stem>`: a name that says which process owns the directory."""
    return f"parity-p{os.getpid() if pid is None else pid}-{stem}"


def owner(name: str) -> int | None:
    """The owner pid encoded in a directory name, or None for a name not ours."""
    match = _OWNED.match(name)
    return int(match.group(1)) if match else None


def stale(names: Iterable[str], alive: Callable[[int], bool]) -> list[str]:
    """The names whose owner is not alive (names without an owner are not ours)."""
    return sorted(n for n in names if (pid := owner(n)) is not None and not alive(pid))


def pid_alive(pid: int) -> bool:
    """Whether a process `pid` exists (and is not a zombie, which writes nothing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def remove_stale(parent: Path, alive: Callable[[int], bool] = pid_alive) -> list[Path]:
    """Remove the directories under `parent` that a dead harness owned; what went."""
    try:
        names = [e.name for e in os.scandir(parent) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    gone = [parent / name for name in stale(names, alive)]
    for path in gone:
        shutil.rmtree(path, ignore_errors=True)
    return gone

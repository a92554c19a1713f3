"""What a killed harness left behind: run directories and session caches it owned.

A harness removes its run directories after each run and its session cache at the end,
unless it is killed first (`kill -9`, OOM, a closed CI runner). Each such directory
carries its owner's pid in its name (`owned_name`), so the next harness can tell a
directory whose owner is dead (removed) from one a live harness is still using (kept,
whichever user or worker it belongs to). A pid reused by an unrelated process keeps a
stale directory one more time: the safe way to be wrong.

A pid means something only in its pid namespace: two harnesses in two containers (or a
CI job under `unshare --pid`) sharing one /tmp see each other's owners as dead. So the
name also carries the owner's pid namespace (`n<inode>` of /proc/self/ns/pid), and a
directory of another namespace is never judged, never removed.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

_OWNED = re.compile(r"^parity-p(\d+)(?:n(\d+))?-")


def pid_namespace() -> int | None:
    """This process's pid namespace (the inode of /proc/self/ns/pid); None off Linux."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None


def owned_name(stem: str, pid: int | None = None, ns: int | None = None) -> str:
    """`parity-p<pid>n<namespace>-<stem>`: a name that says which process owns the
    directory (`ns` defaults to this process's pid namespace)."""
    ns = pid_namespace() if ns is None else ns
    # Fixed widths (a pid fits 7 digits, a namespace inode 10): a run's paths have the
    # same length in every run, and an agent that counts the tokens of a prompt naming
    # its workdir (native 0.2.x's usage_update) reports the same number every time.
    mark = f"n{ns:010d}" if ns is not None else ""
    return f"parity-p{os.getpid() if pid is None else pid:07d}{mark}-{stem}"


def owner(name: str) -> int | None:
    """The owner pid encoded in a directory name, or None for a name not ours."""
    match = _OWNED.match(name)
    return int(match.group(1)) if match else None


def namespace(name: str) -> int | None:
    """The owner's pid namespace encoded in a name; None for names without one."""
    match = _OWNED.match(name)
    return int(match.group(2)) if match and match.group(2) else None


def stale(names: Iterable[str], alive: Callable[[int], bool], ns: int | None = None) -> list[str]:
    """The names whose owner is not alive (names without an owner are not ours, nor
    are names of another pid namespace than `ns`, whose pids we cannot see)."""
    return sorted(
        n
        for n in names
        if (pid := owner(n)) is not None and namespace(n) in (None, ns) and not alive(pid)
    )


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
    gone = [parent / name for name in stale(names, alive, pid_namespace())]
    for path in gone:
        shutil.rmtree(path, ignore_errors=True)
    return gone

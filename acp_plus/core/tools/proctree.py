"""The process tree as Linux shows it: the one place acp-plus reads /proc or calls prctl.

Stdlib only and importing nothing from acp_plus, because the tool supervisor
(`_reaper.py`) loads it as a plain sibling file in a `python -I -S` child process;
the agent imports it as `acp_plus.core.tools.proctree`. Where /proc is missing
(not Linux), the readers degrade: no descendants, and liveness asks `kill(pid, 0)`.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading

LINUX = sys.platform.startswith("linux")
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def prctl(option: int, value: int) -> bool:
    """`prctl(option, value)`; False where it is unavailable or fails."""
    if not LINUX:
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _state_and_parent(stat: bytes) -> tuple[bytes, int] | None:
    # /proc/<pid>/stat is "pid (comm) state ppid ..."; comm may hold spaces and ")",
    # so the fields start after the last ")".
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 2:
        return None
    return fields[0], int(fields[1])


def _dead(state: bytes) -> bool:
    # Zombie or dead: gone, only waiting to be reaped.
    return state in (b"Z", b"X")


def descendants(root: int) -> list[int]:
    """Every live descendant of `root`, from /proc (empty where /proc is missing)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    children: dict[int, list[int]] = {}
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                parsed = _state_and_parent(fh.read())
        except OSError:
            continue
        if parsed is None or _dead(parsed[0]):
            continue
        children.setdefault(parsed[1], []).append(int(entry))
    found: list[int] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether `pid` is running (a zombie is not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            parsed = _state_and_parent(fh.read())
    except OSError:
        if LINUX:
            return False
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True
    return parsed is not None and not _dead(parsed[0])


def agent_pids() -> frozenset[int]:
    """This process's pid and the ids of its threads (each is a /proc/<n> of its own)."""
    pid = os.getpid()
    ids = {pid, *(t.native_id for t in threading.enumerate() if t.native_id is not None)}
    with contextlib.suppress(OSError):
        ids.update(int(tid) for tid in os.listdir(f"/proc/{pid}/task") if tid.isdigit())
    return frozenset(ids)

"""Descendants that leave an agent's process group, and agents whose harness dies.

An agent may daemonize a child: double-fork it into a new session (`setsid`), so
killing the agent's process group misses it. The harness makes itself a child
subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`, Linux): such an orphan is then re-parented
to the harness instead of init, and `adopted()` finds it as a child the harness never
started itself. `spawn` registers the processes it starts (`claim`) so they are never
mistaken for orphans, and only processes carrying this harness's mark in their
environment (`MARK`, set in every agent's and terminal's environment and inherited by
what they start) or the no-new-privileges bit (`PR_SET_NO_NEW_PRIVS`, set on every agent
and terminal; the kernel passes it to every descendant and nothing can clear it, so a
child that empties its environment, `setsid`s and double-forks still carries it) are
ever ended: a child the host process started itself, in a session of its own (a test's
subprocess, say), is left alone. Each agent also gets a parent-death signal
(`PR_SET_PDEATHSIG` SIGKILL), so a `kill -9` of the harness takes its agents with it.

How the harness keeps its own secrets from agents is `parity.driver.guard`.

Elsewhere than Linux every function here is a harmless no-op.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import time
from typing import NamedTuple

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38

MARK = "PARITY_HARNESS_PID"
"""Environment variable naming the harness an agent (and so each descendant) belongs to."""

_claimed: set[int] = set()
_subreaper = False
_libc: ctypes.CDLL | None = None


def prctl(option: int, value: int) -> bool:
    """`prctl(option, value, 0, 0, 0)` succeeded (False elsewhere than Linux)."""
    global _libc
    if not sys.platform.startswith("linux"):
        return False
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    return int(_libc.prctl(option, value, 0, 0, 0)) == 0


def _no_new_privs(pid: int | str) -> bool:
    """Whether `pid` runs with the no-new-privileges bit (unreadable: no)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            return b"\nNoNewPrivs:\t1" in fh.read()
    except OSError:
        return False


_HARNESS_NNP = _no_new_privs("self")
"""The harness itself runs with the bit (a container started with no-new-privileges):
then every child has it, and only the environment's mark tells an agent's apart."""


def become_subreaper() -> bool:
    """Make this process the child subreaper of everything it starts (once)."""
    global _subreaper
    if not _subreaper:
        _subreaper = prctl(_PR_SET_CHILD_SUBREAPER, 1)
    return _subreaper


def die_with_parent() -> None:
    """`preexec_fn` for an agent: SIGKILL it when the harness's spawning thread ends;
    mark it and all it starts (`PR_SET_NO_NEW_PRIVS`, see the module doc; it also keeps
    setuid programs from raising what the agent may do).

    The signal follows the thread that forked, which is the event loop's; a harness
    that is SIGKILLed loses every thread at once, which is the case this is for."""
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    prctl(_PR_SET_NO_NEW_PRIVS, 1)


def marked_env(env: dict[str, str]) -> dict[str, str]:
    """`env` with this harness's mark (what `adopted` recognises its orphans by)."""
    return {**env, MARK: str(os.getpid())}


def _carries_mark(pid: int, me: int) -> bool:
    """Whether `pid` is an agent's: its environment names this harness, or it has the
    no-new-privileges bit the harness itself lacks (unreadable: not ours)."""
    if not _HARNESS_NNP and _no_new_privs(pid):
        return True
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            environ = fh.read()
    except OSError:
        return False
    return f"{MARK}={me}".encode() in environ.split(b"\0")


def claim(pid: int) -> None:
    """Record a process the harness started itself (an agent, a client terminal)."""
    _claimed.add(pid)


def release(pid: int) -> None:
    _claimed.discard(pid)


class ProcStat(NamedTuple):
    """The fields of `/proc/<pid>/stat` the harness uses."""

    state: str
    ppid: int
    pgrp: int
    session: int
    cpu: int = 0
    """User and system time so far, in clock ticks."""


def proc_stat(pid: int) -> ProcStat | None:
    """`pid`'s state, parent, process group, session and CPU time from /proc; None when
    gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    # The command name is parenthesised and may contain spaces: split after it. What
    # follows is "state ppid pgrp session tty_nr ..."; utime and stime are its 12th
    # and 13th fields.
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 4:
        return None
    cpu = int(fields[11]) + int(fields[12]) if len(fields) > 12 else 0
    return ProcStat(fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[3]), cpu)


def adopted() -> list[int]:
    """Children of this process it did not start: descendants of agents (or of their
    terminals) that were orphaned and re-parented to the subreaper.

    A child in the harness's own session is one the harness started with a plain
    `subprocess` call (pytest, `parity` itself), never an agent's: agents and
    terminals run in sessions of their own. A child without the mark was started by
    the host process itself, not by an agent, and is not ours to end either."""
    if not _subreaper:
        return []
    me = os.getpid()
    own_session = os.getsid(0)
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in _claimed:
            continue
        info = proc_stat(int(entry))
        if (
            info is not None
            and info.ppid == me
            and info.session != own_session
            and _carries_mark(int(entry), me)
        ):
            found.append(int(entry))
    return found


def running_adopted() -> list[int]:
    """The adopted orphans still running (a zombie has ended: only reaping is left)."""
    return [pid for pid in adopted() if (info := proc_stat(pid)) and info.state != "Z"]


def end_adopted(timeout: float = 2.0, foreign: frozenset[int] = frozenset()) -> int:
    """SIGKILL and reap every adopted orphan (zombies included), again for the children
    each one leaves (they are re-parented here in turn); how many of them were still
    running (a zombie had ended by itself: reaped, not counted), but for `foreign` ones
    (ended too, but adopted before the run that asks began)."""
    total = 0
    deadline = time.monotonic() + timeout
    while (pids := adopted()) and time.monotonic() < deadline:
        running = [pid for pid in pids if (info := proc_stat(pid)) and info.state != "Z"]
        total += sum(1 for pid in running if pid not in foreign)
        _kill_and_reap(pids, deadline)
    return total


def _kill_and_reap(pids: list[int], deadline: float) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids:
        # Reaping is ours to do: nobody else waits for a process it never started.
        while time.monotonic() < deadline:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                break
            if done:
                break
            time.sleep(0.005)

"""Tool-process supervisor: `python -I -S _reaper.py <parent-pid> <argv...>`.

Runs `argv` as its child and confines everything that child starts. It makes itself a
child subreaper (PR_SET_CHILD_SUBREAPER), so descendants that double-fork or call
`setsid` reparent to it rather than to init, and it stays their ancestor. When the child
exits it SIGKILLs every remaining descendant (found by walking /proc), reaps them, writes
one JSON status line `{"code": N, "background": K}` on its own stderr and exits with
the child's code. It arms PR_SET_PDEATHSIG=SIGTERM for itself (then checks that the agent
is still its parent, closing the start-up race), and SIGTERM/SIGHUP/SIGINT run the same
cleanup, so a SIGKILLed agent still leaves nothing behind; the child itself
gets PR_SET_PDEATHSIG=SIGKILL, so it cannot outlive this supervisor.

The child's stdout and stderr are this process's stdout (fd 1): fd 2 carries the status
only. Standalone on purpose (stdlib only, no package import) so it starts quickly.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


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
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if fields and fields[0] in (b"Z", b"X"):
            continue  # already dead; only needs reaping
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_all() -> int:
    """SIGKILL all descendants until none is left; how many there were."""
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, signal.SIG_IGN)
    killed: set[int] = set()
    for _ in range(100):
        pids = descendants(os.getpid())
        if not pids:
            break
        for pid in pids:
            killed.add(pid)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)
        _reap()
    return len(killed)


class _Stop(Exception):
    pass


def _stop(signum: int, frame: object) -> None:
    raise _Stop(signum)


def main() -> int:
    parent, argv = int(sys.argv[1]), sys.argv[2:]
    status = os.fdopen(os.dup(2), "w")
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _stop)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # the agent's death runs the cleanup
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    try:
        if os.getppid() != parent:  # the agent died before PDEATHSIG was armed
            raise _Stop(signal.SIGTERM)
        child = os.fork()
        if child == 0:
            try:
                for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                    signal.signal(signum, signal.SIG_DFL)
                os.dup2(1, 2)
                _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                os.execvp(argv[0], argv)
            except BaseException:
                pass
            os._exit(127)
        while True:
            pid, wstatus = os.waitpid(-1, 0)
            if pid == child:
                break
        code = os.waitstatus_to_exitcode(wstatus)
        code = 128 - code if code < 0 else code
    except _Stop as stop:
        kill_all()
        return 128 + int(stop.args[0])
    background = kill_all()
    status.write(json.dumps({"code": code, "background": background}) + "\n")
    status.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())

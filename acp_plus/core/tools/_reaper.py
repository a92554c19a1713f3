"""Tool-process supervisor: `python -I -S _reaper.py <parent-pid> <argv...>`.

Runs `argv` as its child and confines everything that child starts. It makes itself a
child subreaper (PR_SET_CHILD_SUBREAPER), so descendants that double-fork or call
`setsid` reparent to it rather than to init, and it stays their ancestor. When the child
exits it gives the rest a moment to leave (`settle`), then SIGKILLs every remaining
descendant (`proctree.descendants`), reaps them, writes
one JSON status line `{"code": N, "background": K}` on its own stderr and exits with
the child's code. It arms PR_SET_PDEATHSIG=SIGTERM for itself (then checks that the agent
is still its parent, closing the start-up race), and SIGTERM/SIGHUP/SIGINT run the same
cleanup, so a SIGKILLed agent still leaves nothing behind; the child itself
gets PR_SET_PDEATHSIG=SIGKILL, so it cannot outlive this supervisor.

The child's stdout and stderr are this process's stdout (fd 1), or its stderr goes to
the inherited descriptor N given as `--stderr-fd=N` before `argv`: fd 2 carries the status
only. Standalone on purpose (stdlib only, no package import: its one sibling,
`proctree.py`, is loaded as a plain file) so it starts quickly.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing into the supervisor
if TYPE_CHECKING or __package__:
    from acp_plus.core.tools import proctree
else:
    # `-I` keeps the script's directory off sys.path: load the /proc reader, a stdlib-only
    # sibling file, on its own (no acp_plus package code runs here), then drop the entry
    # so no other sibling can shadow a stdlib module.
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, _here)
    import proctree

    sys.path.remove(_here)


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
        pids = proctree.descendants(os.getpid())
        if not pids:
            break
        for pid in pids:
            killed.add(pid)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)
        _reap()
    return len(killed)


SETTLE = 0.2
"""Seconds the command's leftovers get to leave on their own before they count as
background processes and are killed. A sandboxed command needs it: bubblewrap's outer
process exits with the command's status while its init in the PID namespace is still
tearing down, and that is no background job of the command's."""


def settle(grace: float = SETTLE) -> None:
    """Wait up to `grace` seconds for every descendant to be gone, reaping as they go."""
    deadline = time.monotonic() + grace
    while proctree.descendants(os.getpid()) and time.monotonic() < deadline:
        _reap()
        time.sleep(0.005)
    _reap()


class _Stop(Exception):
    pass


def _stop(signum: int, frame: object) -> None:
    raise _Stop(signum)


def main() -> int:
    parent, argv = int(sys.argv[1]), sys.argv[2:]
    err_fd = 1
    if argv and argv[0].startswith("--stderr-fd="):
        err_fd = int(argv.pop(0).partition("=")[2])
    status = os.fdopen(os.dup(2), "w")
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _stop)
    proctree.prctl(proctree.PR_SET_PDEATHSIG, signal.SIGTERM)  # the agent's death runs the cleanup
    proctree.prctl(proctree.PR_SET_CHILD_SUBREAPER, 1)
    try:
        if os.getppid() != parent:  # the agent died before PDEATHSIG was armed
            raise _Stop(signal.SIGTERM)
        child = os.fork()
        if child == 0:
            try:
                for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                    signal.signal(signum, signal.SIG_DFL)
                os.dup2(err_fd, 2)
                if err_fd > 2:
                    os.close(err_fd)
                proctree.prctl(proctree.PR_SET_PDEATHSIG, signal.SIGKILL)
                os.execvp(argv[0], argv)
            except BaseException:
                pass
            os._exit(127)
        if err_fd > 2:
            os.close(err_fd)  # the child's copy is the only writer: EOF when it is done
        while True:
            pid, wstatus = os.waitpid(-1, 0)
            if pid == child:
                break
        code = os.waitstatus_to_exitcode(wstatus)
        code = 128 - code if code < 0 else code
    except _Stop as stop:
        kill_all()
        return 128 + int(stop.args[0])
    settle()
    background = kill_all()
    status.write(json.dumps({"code": code, "background": background}) + "\n")
    status.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())

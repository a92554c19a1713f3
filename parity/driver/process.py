"""Agent processes: an allow-listed environment, their own process group, a shutdown ladder.

Every agent runs as the leader of a new session (`start_new_session=True`), so the
whole tree it starts can be signalled at once through its process group. The ladder
is the one acp-tck uses: close stdin and wait, SIGTERM the group and wait, SIGKILL the
group. A group is registered while it may be alive; an `atexit` hook SIGKILLs whatever
is still registered, so an interrupted harness leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import os
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from parity.core.transcript import ProcessRecord
from parity.driver import jsonrpc, orphans
from parity.driver.guard import guard_harness

STDERR_TAIL = 8 * 1024
"""Bytes of stderr kept for the transcript."""
EXIT_POLL = 0.02
"""Seconds between checks of a process's return code while its pipes stay open."""
LEFTOVER_GRACE = 1.0
"""Seconds the children an agent left in its group get to end by themselves after it
ended by itself; those still running then are leftovers (a run problem)."""

ORPHAN_GRACE = 5.0
"""Seconds, from the agent's end, a process it started in a session of its own gets to
follow it: an MCP server that reads EOF only once it has loaded (a Python one takes a
second or more on a loaded machine: codex-acp's, in CI). Paid only while one runs."""

ORPHAN_BUSY_CAP = 20.0
"""Seconds, from the agent's end, such a process (or a child in the agent's group) gets
while it is still working (running or runnable, or in uninterruptible I/O): one still
loading on a machine loaded several times over its cores (seen: load 6 on 2 cores)
reads its EOF only after it has run. A process that sleeps past its grace is waiting
for something else: a leftover."""

LOCALE_NAMES = frozenset(
    {
        "LC_ALL",
        "LC_CTYPE",
        "LC_COLLATE",
        "LC_MESSAGES",
        "LC_MONETARY",
        "LC_NUMERIC",
        "LC_TIME",
        "LC_ADDRESS",
        "LC_IDENTIFICATION",
        "LC_MEASUREMENT",
        "LC_NAME",
        "LC_PAPER",
        "LC_TELEPHONE",
    }
)
"""The locale categories (POSIX and glibc), each by name: a prefix (`LC_*`) would pass
any variable someone named `LC_...`, a planted `LC_TOKEN` included."""
PASSED_NAMES = (
    frozenset({"PATH", "LANG", "LANGUAGE", "TZ", "TERM", "USER", "LOGNAME", "SHELL"}) | LOCALE_NAMES
)
"""Inherited variables an agent gets: what a process needs to run (find programs, pick
a locale, a time zone and a terminal, know its user). An explicit list, no prefix:
everything else, credentials and proxies included, stays with the harness; a target's
own `env` adds what it needs."""


def passed(name: str) -> bool:
    """Whether an inherited variable reaches agents (see `PASSED_NAMES`)."""
    return name in PASSED_NAMES


def allowed_env(base: Mapping[str, str]) -> dict[str, str]:
    """`base` reduced to the allow-list: an allow-list, not a deny-list, because no
    pattern recognises every credential name (DATABASE_URL, SENTRY_DSN, CI_JOB_JWT)."""
    return {k: v for k, v in base.items() if passed(k)}


def agent_env(
    base: Mapping[str, str], home: Path, tmp: Path, launch_env: Mapping[str, str]
) -> dict[str, str]:
    """The environment an agent gets: the allow-listed part of `base`, a private HOME,
    XDG dirs and TMPDIR inside the run, then the launch's own variables (which may set
    anything, a fake API key included)."""
    env = allowed_env(base)
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "TMPDIR": str(tmp),
        }
    )
    env.update(launch_env)
    return orphans.marked_env(env)  # last: a launch cannot remove the harness's mark


# --- the safety net -------------------------------------------------------------------

_live_groups: set[int] = set()


def _kill_group(pgid: int, sig: int) -> bool:
    """Signal a process group; False when it no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        # The group id was reused by something that is not ours: it is gone for us.
        return False
    return True


@atexit.register
def kill_registered_groups() -> None:
    """SIGKILL every process group still registered (interpreter exit, Ctrl-C)."""
    for pgid in sorted(_live_groups):
        _kill_group(pgid, signal.SIGKILL)
    _live_groups.clear()
    orphans.end_adopted()


def group_members(pgid: int) -> list[int]:
    """Pids of live (non-zombie) processes in a process group, read from /proc."""
    members: list[int] = []
    for entry in os.listdir("/proc"):
        info = orphans.proc_stat(int(entry)) if entry.isdigit() else None
        if info is not None and info.state != "Z" and info.pgrp == pgid:
            members.append(int(entry))
    return members


def _outside_group(pgid: int, foreign: frozenset[int]) -> list[int]:
    """Adopted orphans still running that left process group `pgid` (a new session),
    but for those adopted before the agent started (`foreign`)."""
    return [
        pid
        for pid in orphans.running_adopted()
        if pid not in foreign and (info := orphans.proc_stat(pid)) and info.pgrp != pgid
    ]


class _Progress:
    """Which of an ended agent's remaining processes are still working: running or
    waiting for a CPU (R), in uninterruptible I/O (D), or whose CPU time grew within
    the last `WORK_WINDOW` seconds (one loading on a loaded machine is often caught
    asleep between its time slices, or in a thread's wait)."""

    WORK_WINDOW = 1.0

    def __init__(self) -> None:
        self._seen: dict[int, tuple[int, float]] = {}  # pid -> (CPU ticks, when they grew)

    def working(self, pid: int, now: float) -> bool:
        info = orphans.proc_stat(pid)
        if info is None or info.state == "Z":
            return False
        cpu, grew = self._seen.get(pid, (info.cpu, float("-inf")))
        if info.cpu != cpu:
            grew = now
        self._seen[pid] = (info.cpu, grew)
        return info.state in ("R", "D") or now - grew <= self.WORK_WINDOW

    async def outlast(
        self, remaining: Callable[[], list[int]], grace_end: float, busy_end: float
    ) -> list[int]:
        """Wait while `remaining()` finds processes: until `grace_end` in any case, then
        as long as one of them is working, but not past `busy_end`. What is left."""
        loop = asyncio.get_running_loop()
        while (pids := remaining()) and loop.time() < busy_end:
            busy = any([self.working(pid, loop.time()) for pid in pids])
            if loop.time() >= grace_end and not busy:
                # Listed again: one that ended between the listing and its check (seen
                # as not working) followed the agent after all; it is no leftover.
                return remaining()
            await asyncio.sleep(0.02)
        return pids


# --- one agent process ------------------------------------------------------------------


@dataclass
class Ladder:
    """Seconds to wait at each rung of the shutdown ladder."""

    eof: float = 2.0
    term: float = 2.0
    kill: float = 2.0


@dataclass
class AgentProcess:
    """A spawned agent: its pipes, its stderr tail, and its `ProcessRecord`."""

    proc: asyncio.subprocess.Process
    record: ProcessRecord
    _stderr: bytearray = field(default_factory=bytearray)
    _stderr_task: asyncio.Task[None] | None = None
    foreign: frozenset[int] = frozenset()
    """Orphans this process had adopted before the agent started: an earlier run's (one
    process runs many agents in turn), never this one's leftovers."""

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self.proc.stdout is not None
        return self.proc.stdout

    @property
    def stdin(self) -> asyncio.StreamWriter:
        assert self.proc.stdin is not None
        return self.proc.stdin

    def stderr_tail(self) -> str:
        """The last `STDERR_TAIL` bytes of stderr; a byte that is not UTF-8 is kept as a
        lone surrogate (`surrogateescape`, as a frame's `raw`), escaped where shown."""
        return bytes(self._stderr[-STDERR_TAIL:]).decode("utf-8", errors="surrogateescape")

    async def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(65536):
            self._stderr += chunk
            if len(self._stderr) > 4 * STDERR_TAIL:
                del self._stderr[:-STDERR_TAIL]

    def exited(self) -> bool:
        return self.proc.returncode is not None

    async def wait_exit(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the leader to exit; True if it did.

        `Process.wait()` alone is not enough: on Python 3.11 it returns only once
        every pipe has closed, and a child that inherited stdout keeps it open after
        the leader died. The return code itself is set at exit, so it is polled too."""
        if self.exited():
            return True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        waiter = loop.create_task(self.proc.wait())
        try:
            while not self.exited():
                left = deadline - loop.time()
                if left <= 0:
                    return False
                await asyncio.wait({waiter}, timeout=min(left, EXIT_POLL))
        finally:
            waiter.cancel()
        return True

    async def settle(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for the process to exit and stderr to end,
        so a status and stderr tail read afterwards are complete."""
        deadline = asyncio.get_running_loop().time() + timeout
        await self.wait_exit(timeout)
        if self._stderr_task is not None:
            left = max(deadline - asyncio.get_running_loop().time(), 0.0)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), left)

    async def shutdown(self, ladder: Ladder) -> ProcessRecord:
        """Run the shutdown ladder, then fill and return the process record.

        Safe to call more than once. On cancellation the group is SIGKILLed before the
        cancellation propagates, so nothing survives an interrupted harness.
        """
        try:
            await self._ladder(ladder)
        except BaseException:
            _kill_group(self.pid, signal.SIGKILL)
            raise
        finally:
            self._finish_record()
        return self.record

    async def _ladder(self, ladder: Ladder) -> None:
        if self.exited():
            self.record.stopped_by = self.record.stopped_by or "exit"
        else:
            with contextlib.suppress(OSError, RuntimeError):
                # An agent that stopped reading leaves our bytes buffered; plain close()
                # would wait for them forever, so drop them to deliver EOF now.
                if self.stdin.transport.get_write_buffer_size():
                    self.stdin.transport.abort()
                else:
                    self.stdin.close()
            if await self.wait_exit(ladder.eof):
                self.record.stopped_by = "eof"
            elif not _kill_group(self.pid, signal.SIGTERM):
                # The group vanished just now: it did end on EOF, only late.
                await self.wait_exit(ladder.term)
                self.record.stopped_by = "eof"
            elif await self.wait_exit(ladder.term):
                self.record.stopped_by = "sigterm"
            else:
                _kill_group(self.pid, signal.SIGKILL)
                self.record.stopped_by = "sigkill"
                await self.wait_exit(ladder.kill)
        # The leader is gone, but children it left in the group may not be. Those of an
        # agent that ended by itself get a moment to follow it (an MCP server reading
        # EOF); whatever is still there outlived it, a leftover. A SIGKILLed process
        # takes a moment to die, so wait until the group is really empty.
        loop = asyncio.get_running_loop()
        left = 0
        if self.record.stopped_by != "sigkill":
            deadline = loop.time() + LEFTOVER_GRACE
            busy_deadline = loop.time() + ORPHAN_BUSY_CAP
            progress = _Progress()
            # One still working past the grace is on its way to its end (a loaded
            # machine); one asleep is waiting for something else: a leftover.
            members = await progress.outlast(
                lambda: group_members(self.pid), deadline, busy_deadline
            )
            left = len(members)
            # One it started in a session of its own (codex-acp's MCP servers) was
            # re-parented here when it ended: a moment to read EOF and follow it.
            # (Not one still in its group: that one is a leftover, counted above.)
            deadline += ORPHAN_GRACE - LEFTOVER_GRACE
            outside = functools.partial(_outside_group, self.pid, self.foreign)
            await progress.outlast(outside, deadline, busy_deadline)
        if _kill_group(self.pid, signal.SIGKILL):
            deadline = loop.time() + ladder.kill
            while group_members(self.pid) and loop.time() < deadline:
                await asyncio.sleep(0.01)
        # Descendants that left the group (a double fork into a new session) were
        # re-parented to the harness, the subreaper: end them too (docs/driver.md).
        self.record.leftovers += left + orphans.end_adopted(foreign=self.foreign)
        if self._stderr_task is not None:
            # A child outside the group can hold stderr open; do not wait on it forever.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), ladder.kill)

    def _finish_record(self) -> None:
        rc = self.proc.returncode
        if rc is not None:
            _live_groups.discard(self.pid)
            orphans.release(self.pid)
            if rc < 0:
                self.record.signal = -rc
            else:
                self.record.exit_code = rc
        if self._stderr_task is not None and not self._stderr_task.done():
            self._stderr_task.cancel()
        self.record.stderr_tail = self.stderr_tail()

    def status(self) -> str:
        """A short human description of how the process ended so far."""
        rc = self.proc.returncode
        if rc is None:
            return "still running"
        if rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = str(-rc)
            return f"killed by {name}"
        return f"exit code {rc}"


async def spawn(argv: list[str], env: Mapping[str, str], cwd: Path) -> AgentProcess:
    """Start an agent as the leader of its own process group, pipes on stdio.

    It dies with the harness (a parent-death signal), and the harness is the subreaper
    of whatever it leaves behind (`parity.driver.orphans`). Raises OSError when the
    program cannot be started (missing binary, not executable).
    """
    orphans.become_subreaper()
    guard_harness()
    foreign = frozenset(orphans.adopted())
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(env),
        cwd=str(cwd),
        start_new_session=True,
        preexec_fn=orphans.die_with_parent,
        limit=jsonrpc.FRAME_LIMIT,
    )
    _live_groups.add(proc.pid)
    orphans.claim(proc.pid)
    agent = AgentProcess(proc, ProcessRecord(argv=list(argv), pid=proc.pid), foreign=foreign)
    agent._stderr_task = asyncio.get_running_loop().create_task(agent._drain_stderr())
    return agent

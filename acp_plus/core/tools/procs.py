"""Tool processes that never outlive their call, nor the agent, and never see its secrets.

A command runs under `_reaper.py` (a tiny stdlib supervisor, see its docstring): the
supervisor is a child subreaper, so everything the command starts (double forks and
`setsid` included) stays below it, and it kills that whole tree when the command exits,
when it is told to stop, or when the agent dies (it arms PR_SET_PDEATHSIG=SIGTERM first
thing, then checks that its parent is still this process: no `preexec_fn`, which is not
safe in a threaded process). acp-plus itself becomes a child subreaper too, so a tree whose
supervisor was SIGKILLed reparents to acp-plus, and `kill_tree` walks /proc (`proctree`) to kill
every descendant of a tool's process, not only its process group.

`tool_env()` is the environment tools get: the agent's own credentials removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import json
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acp_plus.core.tools.proctree import PR_SET_CHILD_SUBREAPER, alive, descendants, prctl

REAPER = Path(__file__).with_name("_reaper.py")

SECRET_PATTERNS: tuple[str, ...] = (
    "*_API_KEY",
    "API_KEY",
    "*_KEY",
    "*_TOKEN",
    "TOKEN",
    "*_SECRET",
    "SECRET",
    "*_SECRET_*",
    "*PASSWORD*",
    "*PASSWD*",
)
"""Environment names (case-insensitive globs) never passed to a tool process."""

_extra_secret_names: set[str] = set()


def protect_env(*names: str) -> None:
    """Also drop these exact names from tool environments (e.g. a provider's
    `api_key_env`, whatever it is called). Process-wide."""
    _extra_secret_names.update(n for n in names if n)


def is_secret_name(name: str) -> bool:
    """Whether the variable `name` looks like a credential and must not reach a tool."""
    upper = name.upper()
    return name in _extra_secret_names or any(
        fnmatch.fnmatchcase(upper, pattern) for pattern in SECRET_PATTERNS
    )


def tool_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`environ` (default: this process's) without the agent's credentials."""
    source = os.environ if environ is None else environ
    return {k: v for k, v in source.items() if not is_secret_name(k)}


_subreaper = False


def become_subreaper() -> None:
    """Make this process a child subreaper (once; Linux only): orphaned descendants of
    tools reparent here instead of to init, so they can still be found and killed."""
    global _subreaper
    if not _subreaper:
        _subreaper = True
        prctl(PR_SET_CHILD_SUBREAPER, 1)


async def spawn_supervised(argv: list[str], cwd: Path) -> asyncio.subprocess.Process:
    """Start `argv` under the supervisor: stdout (command stdout+stderr), stderr (status)
    pipes, stdin /dev/null, its own session, the filtered environment."""
    return await _spawn([str(os.getpid()), *argv], cwd, ())


async def spawn_split(argv: list[str], cwd: Path) -> tuple[asyncio.subprocess.Process, int]:
    """`spawn_supervised` with the command's stderr apart: the process (stdout: the
    command's stdout, stderr: the status) and the read end of the command's stderr pipe,
    which the caller owns."""
    read_end, write_end = os.pipe()
    try:
        args = [str(os.getpid()), f"--stderr-fd={write_end}", *argv]
        proc = await _spawn(args, cwd, (write_end,))
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return proc, read_end


async def _spawn(args: list[str], cwd: Path, keep: tuple[int, ...]) -> asyncio.subprocess.Process:
    become_subreaper()
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",
        "-S",
        str(REAPER),
        *args,
        cwd=cwd,
        env=tool_env(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        pass_fds=keep,
        start_new_session=True,  # its own group, for where /proc cannot be walked
    )


def read_status(raw: bytes) -> dict[str, Any] | None:
    """The supervisor's status line, or None when it wrote none (it was stopped)."""
    for line in reversed(raw.decode("utf-8", "replace").splitlines()):
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                return value
    return None


def _reap_adopted(pids: list[int]) -> None:
    # Orphans that reparented to this process (we are a subreaper) are nobody else's to
    # wait for: reap them so they do not stay zombies. asyncio's own children are never
    # in `pids` (only descendants of a tool's process are).
    for pid in pids:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


async def kill_tree(proc: asyncio.subprocess.Process, grace: float = 1.0) -> None:
    """Stop a supervised tool: ask the supervisor to clean up (it sees every descendant),
    then SIGKILL whatever is left of its tree, its group and itself."""
    doomed = descendants(proc.pid)
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(proc.wait()), timeout=grace)
    for _ in range(20):
        left = [p for p in {*doomed, *descendants(proc.pid)} if alive(p)]
        if not left:
            break
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        doomed = left
        await asyncio.sleep(0.01)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(proc.wait()), timeout=2.0)
    _reap_adopted(doomed)


__all__ = [
    "SECRET_PATTERNS",
    "become_subreaper",
    "is_secret_name",
    "kill_tree",
    "protect_env",
    "read_status",
    "spawn_supervised",
    "tool_env",
]

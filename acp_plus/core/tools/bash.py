"""The built-in `bash` tool: a command in the session cwd, inside the OS sandbox.

Below `danger-full-access` every command runs under bubblewrap with the standing mode's
profile (`core/confine.py`), or under Landlock (`landlock_exec.py`, with a private
`TMPDIR` made for the call and removed after it) where bubblewrap is missing, and nobody
is asked, as native does. The model may ask for a wider mode for one call
(`sandbox_permissions` + `justification`); that is the only question `bash` puts to the
client, and the grant is that call's alone. With no usable
backend a confined command is refused, never run unconfined (native's answer).

Whatever the mode, the command runs under the supervisor (`procs.py`): no credential in
its environment, and nothing it starts outlives the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from acp_plus.core.confine import (
    DENIAL_SIGNATURE,
    ESCALATION_TARGETS,
    LANDLOCK_PREFIX,
    LANDLOCK_SIGNATURES,
    RUNNER_PREFIX,
    Profile,
    bwrap_args,
    denial_notes,
    escalation,
    escalation_reason,
    hidden_paths,
    landlock_args,
    runner_failure,
    unavailable,
)
from acp_plus.core.sandbox import SandboxMode
from acp_plus.core.tools.backend import Backend, find_backend
from acp_plus.core.tools.base import ToolContext, ToolResult
from acp_plus.core.tools.procs import kill_tree, read_status, spawn_supervised

OUTPUT_CAP = 64 * 1024
"""Characters of tool output the model sees at most."""
DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 600.0


class HeadTail:
    """Keeps the first and last `limit // 2` bytes of a stream and counts the middle."""

    def __init__(self, limit: int = OUTPUT_CAP) -> None:
        self.half = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.size = 0

    def feed(self, block: bytes) -> None:
        """Take the next chunk of output."""
        self.size += len(block)
        room = self.half - len(self.head)
        if room > 0:
            self.head += block[:room]
            block = block[room:]
        if block:
            self.tail += block
            del self.tail[: max(0, len(self.tail) - self.half)]

    def text(self) -> str:
        """Head and tail, with `... [N bytes omitted] ...` between them when cut."""
        omitted = self.size - len(self.head) - len(self.tail)
        head = bytes(self.head).decode("utf-8", "replace")
        if omitted <= 0:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")
        tail = bytes(self.tail).decode("utf-8", "replace")
        return f"{head}\n... [{omitted} bytes omitted] ...\n{tail}"


def _command(args: dict[str, Any]) -> str:
    value = args.get("command")
    if not isinstance(value, str):
        raise ValueError("command must be a string")
    return value


DESCRIPTION = (
    "Run a bash command in the working directory. Arguments: command, optional timeout (s). "
    "Commands run under a file sandbox; a blocked file operation is reported as "
    "`[sandbox: file access denied under <mode> mode]`: a policy denial, not a bug in the "
    "command. When a wider mode would let a denied command succeed, retry the exact same "
    "command once with `sandbox_permissions` (the narrowest wider mode that suffices) and a "
    "one-sentence `justification`; the user is asked. Never escalate speculatively, and a "
    "rejected escalation is final for that command."
)


class BashTool:
    """Run a shell command in the session cwd, sandboxed, with a timeout and an output cap."""

    name = "bash"
    description = DESCRIPTION
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string"},
            "timeout": {"type": "number", "minimum": 1, "maximum": MAX_TIMEOUT},
            "sandbox_permissions": {
                "type": "string",
                "enum": list(ESCALATION_TARGETS),
                "description": "The wider sandbox mode this command needs: only as a one-shot "
                "retry of a command the sandbox just denied; needs justification and the "
                "user's approval.",
            },
            "justification": {
                "type": "string",
                "description": "With sandbox_permissions: one sentence for the user saying why "
                "this exact command needs the wider access.",
            },
        },
        "required": ["command"],
    }

    def __init__(
        self,
        homes: Sequence[Path] = (),
        find: Callable[[], Backend | None] = find_backend,
    ) -> None:
        self.homes = tuple(home.resolve(strict=False) for home in homes)
        self.find = find

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """Nothing to ask unless the model requests a wider mode for this call; a malformed
        or non-widening request fails the call before anything runs (native's texts)."""
        _command(args)
        wanted = escalation(args, ctx.sandbox)
        return None if wanted is None else escalation_reason(wanted, str(args["justification"]))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the command, confined unless the call's mode is `danger-full-access`.

        The loop calls `run` only after `approval_reason`'s question (if any) was answered
        allow-once, so a requested escalation is the call's mode here. The call returns
        when the command's own shell exits; the supervisor kills whatever it left, and the
        result says background output was not waited for. A timeout or cancellation kills
        the whole tree. Output over `OUTPUT_CAP` keeps its head and tail, a refused write
        adds native's sandbox markers, and the result ends with `[exit code: N]`.
        """
        command = _command(args)
        mode: SandboxMode = escalation(args, ctx.sandbox) or ctx.sandbox
        argv = ["bash", "-c", command]
        backend: Backend | None = None
        tmpdir: Path | None = None
        if mode != "danger-full-access":
            backend = await asyncio.to_thread(self.find)
            if backend is None:
                return ToolResult.text(unavailable(mode), is_error=True)
            profile = self._profile(mode, ctx, backend)
            if backend.kind == "bwrap":
                argv = [backend.executable, *bwrap_args(profile), *argv]
            else:
                if mode == "workspace-write":
                    tmpdir = Path(tempfile.mkdtemp(prefix="acp-plus-bash-"))
                argv = [*backend.prefix(), *landlock_args(profile, tmpdir), *argv]
        timeout = args.get("timeout")
        limit = (
            min(float(timeout), MAX_TIMEOUT)
            if isinstance(timeout, int | float)
            else DEFAULT_TIMEOUT
        )
        try:
            finished = await _supervise(argv, ctx.cwd, limit)
        finally:
            if tmpdir is not None:
                shutil.rmtree(tmpdir, ignore_errors=True)
        if isinstance(finished, ToolResult):
            return finished
        code, out, background = finished
        if backend is not None:
            landlock = backend.kind == "landlock"
            failure = runner_failure(code, out, LANDLOCK_PREFIX if landlock else RUNNER_PREFIX)
            if failure is not None:
                return ToolResult.text(unavailable(mode, failure), is_error=True)
        text = out + ("" if out.endswith("\n") or not out else "\n")
        if background:
            text += "[output from background processes was not waited for]\n"
        if backend is not None:
            signatures = LANDLOCK_SIGNATURES if backend.kind == "landlock" else (DENIAL_SIGNATURE,)
            for note in denial_notes(mode, code, out, signatures):
                text += note + "\n"
        text += f"[exit code: {code}]"
        return ToolResult.text(text, is_error=code != 0)

    def _profile(self, mode: SandboxMode, ctx: ToolContext, backend: Backend) -> Profile:
        workspace = ctx.cwd.resolve(strict=False)
        # Only homes that exist can be covered: bubblewrap cannot create a mount point on
        # the read-only root, and a home that does not exist holds nothing to hide.
        homes = [home for home in self.homes if home.is_dir()]
        return Profile(mode, workspace, hidden_paths(homes, workspace), backend.userns)


async def _supervise(argv: list[str], cwd: Path, limit: float) -> tuple[int, str, int] | ToolResult:
    """Run `argv` under the supervisor: (exit code, output, background processes killed),
    or the timeout's failed result."""
    spawn = asyncio.ensure_future(spawn_supervised(argv, cwd))
    try:
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        # The child may already be running: get its handle so it can be killed.
        with contextlib.suppress(Exception):
            await kill_tree(await spawn)
        raise
    assert proc.stdout is not None and proc.stderr is not None
    output = HeadTail()
    reader = asyncio.ensure_future(_pump(proc.stdout, output))
    status_reader = asyncio.ensure_future(proc.stderr.read())
    try:
        try:
            await asyncio.wait_for(asyncio.shield(proc.wait()), timeout=limit)
        except TimeoutError:
            await kill_tree(proc)
            return ToolResult.text(f"command timed out after {limit:g}s", is_error=True)
        except asyncio.CancelledError:
            await asyncio.shield(kill_tree(proc))
            raise
        # The supervisor killed any leftovers before exiting: the pipe closes soon.
        await asyncio.wait({reader, status_reader}, timeout=2.0)
        status = read_status(status_reader.result()) if status_reader.done() else None
    finally:
        await asyncio.shield(kill_tree(proc, grace=0.0))
        for task in (reader, status_reader):
            task.cancel()
    code = status["code"] if status and isinstance(status.get("code"), int) else None
    if code is None:
        code = proc.returncode if proc.returncode is not None else -1
    background = status.get("background") if status else 0
    return code, output.text(), background if isinstance(background, int) else 0


async def _pump(stream: asyncio.StreamReader, sink: HeadTail) -> None:
    while block := await stream.read(65536):
        sink.feed(block)


__all__ = ["DEFAULT_TIMEOUT", "MAX_TIMEOUT", "OUTPUT_CAP", "BashTool", "HeadTail"]

"""The built-in `bash` tool as native runs it: a command in the session workspace (or
`workdir`), inside the OS sandbox, as a job of the session's `JobTable`.

Every call registers its process as a job at its start, as native's does:
`run_in_background` returns the id at once; a foreground call waits until the command
ends (the job is then forgotten, its result is the call's) or its `timeoutMs` passes,
when the command keeps running as a background job and the result says so. Each stream
keeps its last `MAX_OUTPUT_BYTES` for the model; past that, the whole stream goes to a
file the result names (`Collector`).

Below `danger-full-access` every command runs under bubblewrap with the standing mode's
profile (`core/confine.py`), or under Landlock (`landlock_exec.py`, with a private
`TMPDIR` made for the command and removed after it) where bubblewrap is missing, and
nobody is asked, as native does. The model may ask for a wider mode for one call
(`sandbox_permissions` + `justification`); that is the only question `bash` puts to the
client, and the grant is that call's alone. With no usable backend a confined command
is refused, never run unconfined (native's answer). Whatever the mode, the command runs
under the supervisor (`procs.py`): no credential in its environment, and nothing it
starts outlives it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp_plus.core.confine import (
    DENIAL_SIGNATURE,
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
from acp_plus.core.tools.arg_check import arguments_error
from acp_plus.core.tools.backend import Backend, find_backend
from acp_plus.core.tools.base import ToolContext, ToolResult
from acp_plus.core.tools.bash_text import (
    DEFAULT_TIMEOUT_MS,
    DESCRIPTION,
    MAX_OUTPUT_BYTES,
    MAX_TIMEOUT_MS,
    NO_JOB_CONTROLLER,
    PARAMETERS,
    Stream,
    join_streams,
    js_number,
    render_promoted,
    render_result,
    validate,
)
from acp_plus.core.tools.job_table import Job, JobError, JobTable, Outcome
from acp_plus.core.tools.procs import kill_tree, read_status, spawn_split
from acp_plus.core.tools.spill import private_dir

_spill_dir: Path | None = None
_spill_count = 0


def _spill_file(channel: str) -> Path:
    # One directory per agent process, one file per cut stream (named like native's).
    global _spill_dir, _spill_count
    if _spill_dir is None:
        _spill_dir = private_dir("dsh-subprocess-")
    _spill_count += 1
    name = f"dsh-subprocess-{os.getpid()}-{_spill_count}-{secrets.token_hex(6)}-{channel}.log"
    return _spill_dir / name


class Collector:
    """One stream: its last `limit` bytes, and all of it in a file once it is longer."""

    def __init__(self, channel: str, limit: int = MAX_OUTPUT_BYTES) -> None:
        self.channel = channel
        self.limit = limit
        self.data = bytearray()
        self.size = 0
        self.spill: Path | None = None

    def feed(self, block: bytes) -> None:
        self.size += len(block)
        if self.spill is None and self.size > self.limit:
            self.spill = _spill_file(self.channel)
            self.spill.write_bytes(bytes(self.data))
        if self.spill is not None:
            with self.spill.open("ab") as fh:
                fh.write(block)
        self.data += block
        del self.data[: max(0, len(self.data) - self.limit)]

    def stream(self) -> Stream:
        data = bytes(self.data)
        if self.spill is None:
            return Stream(data.decode("utf-8", "replace"))
        # The tail never starts inside a character.
        start = 0
        while start < len(data) and data[start] & 0xC0 == 0x80:
            start += 1
        return Stream(data[start:].decode("utf-8", "replace"), True, str(self.spill))


@dataclass
class Run:
    """What a command's job leaves for its foreground call."""

    out: Collector = field(default_factory=lambda: Collector("stdout"))
    err: Collector = field(default_factory=lambda: Collector("stderr"))
    code: int | None = None
    failure: str | None = None
    """Why the command did not run (no sandbox backend, the runner failed)."""
    notes: tuple[str, ...] = ()


class BashTool:
    """Run a shell command in the session workspace, sandboxed, as a job."""

    name = "bash"
    description = DESCRIPTION
    parameters = PARAMETERS

    def __init__(
        self,
        jobs: JobTable,
        homes: Sequence[Path] = (),
        find: Callable[[], Backend | None] = find_backend,
        background: bool = True,
    ) -> None:
        self.jobs = jobs
        # Native's job controller comes with the job tools (`dsh-tool-jobs`): without
        # them nothing could read a job, so there is no background run and a command past
        # its timeout is stopped instead of handed over (tools/bash-without-jobs).
        self.background = background
        self.homes = tuple(home.resolve(strict=False) for home in homes)
        self.find = find

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """Nothing to ask unless the model requests a wider mode for this call; malformed
        arguments ask nothing (`run` reports them, as native does before any approval)."""
        if arguments_error(PARAMETERS, args) or validate(args):
            return None
        try:
            wanted = escalation(args, ctx.sandbox)
        except ValueError:
            return None  # `run` says why, as native does, and nobody is asked
        return None if wanted is None else escalation_reason(wanted, str(args["justification"]))

    def refusal(self, args: dict[str, Any], outcome: str) -> str | None:
        """Native's result of an escalation the answer rejected (a delegated child's
        `never` policy gives it: tools/subagent-approvals); None words any other."""
        mode = args.get("sandbox_permissions")
        if mode is None or outcome != "rejected":
            return None
        return (
            f'Error: the user rejected escalating this command to "{mode}"; it stays denied, '
            "so stop and explain instead of working around it"
        )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the command: native's checks, then a job, waited on unless backgrounded."""
        problem = arguments_error(PARAMETERS, args) or validate(args)
        if problem is not None:
            return ToolResult.text(f"Error: {problem}", is_error=True)
        try:
            mode: SandboxMode = escalation(args, ctx.sandbox) or ctx.sandbox
        except ValueError as exc:
            return ToolResult.text(f"Error: {exc}", is_error=True)
        workdir = ctx.cwd.resolve(strict=False)
        if isinstance(args.get("workdir"), str):
            workdir = workdir / args["workdir"]
        if workdir.exists() and not workdir.is_dir():  # Node's spawn: chdir fails first
            return ToolResult.text("Error: spawn ENOTDIR", is_error=True)
        if not workdir.is_dir():
            runner = "bash" if mode == "danger-full-access" else "bwrap"
            return ToolResult.text(f"Error: spawn {runner} ENOENT", is_error=True)
        if args.get("run_in_background") is True and not self.background:
            return ToolResult.text(f"Error: {NO_JOB_CONTROLLER}", is_error=True)
        run = Run()
        command = str(args["command"])

        async def work(job: Job) -> Outcome:
            return await self._execute(command, mode, ctx, workdir, job, run)

        try:
            job = self.jobs.start("bash", command, ctx.session_id, work)
        except JobError as exc:
            return ToolResult.text(f"Error: {exc}", is_error=True)
        job.spill_paths = lambda: [str(c.spill) for c in (run.out, run.err) if c.spill]
        if args.get("run_in_background") is True:
            return ToolResult.text(f"started background job {job.id}")
        timeout = min(float(args.get("timeoutMs") or DEFAULT_TIMEOUT_MS), MAX_TIMEOUT_MS)
        try:
            await self.jobs.wait(job, timeout / 1000)
        except asyncio.CancelledError:
            self.jobs.kill(job, "tool call aborted", by_model=True)
            with contextlib.suppress(Exception):
                await asyncio.shield(job.settled.wait())
            self.jobs.remove(job)
            raise
        if not job.done and self.background:
            return ToolResult.text(render_promoted(self.jobs.read(job), timeout, job.id))
        timed_out = not job.done
        if timed_out:
            self.jobs.kill(job, None, by_model=True)  # its own call reports it: no notice
            await asyncio.shield(job.settled.wait())
        self.jobs.remove(job)
        if timed_out:
            notes = (*run.notes, f"[timed out after {js_number(timeout)}ms]")
            out, err = run.out.stream(), run.err.stream()
            return ToolResult.text(render_result(out, err, None, signal="SIGTERM", notes=notes))
        if run.failure is not None:
            return ToolResult.text(run.failure, is_error=True)
        text = render_result(run.out.stream(), run.err.stream(), run.code, notes=run.notes)
        return ToolResult.text(text)

    async def _execute(
        self,
        command: str,
        mode: SandboxMode,
        ctx: ToolContext,
        workdir: Path,
        job: Job,
        run: Run,
    ) -> Outcome:
        argv = ["bash", "-c", command]
        backend: Backend | None = None
        tmpdir: Path | None = None
        if mode != "danger-full-access":
            backend = await asyncio.to_thread(self.find)
            if backend is None:
                run.failure = unavailable(mode)
                return Outcome("failed", run.failure)
            profile = self._profile(mode, ctx, backend, workdir)
            if backend.kind == "bwrap":
                argv = [backend.executable, *bwrap_args(profile), *argv]
            else:
                if mode == "workspace-write":
                    tmpdir = Path(tempfile.mkdtemp(prefix="acp-plus-bash-"))
                argv = [*backend.prefix(), *landlock_args(profile, tmpdir), *argv]
        try:
            code = await self._supervise(argv, workdir, job, run)
        except asyncio.CancelledError:
            return Outcome("killed", "signal: SIGTERM")
        finally:
            if tmpdir is not None:
                shutil.rmtree(tmpdir, ignore_errors=True)
        run.code = code
        if backend is not None:
            landlock = backend.kind == "landlock"
            err = run.err.stream().text
            failure = runner_failure(code, err, LANDLOCK_PREFIX if landlock else RUNNER_PREFIX)
            if failure is not None:
                run.failure = unavailable(mode, failure)
                return Outcome("failed", run.failure)
            signatures = LANDLOCK_SIGNATURES if landlock else (DENIAL_SIGNATURE,)
            seen = join_streams(run.out.stream().text, err)
            run.notes = tuple(denial_notes(mode, code, seen, signatures))
        return Outcome("completed", f"exit code: {code}")

    async def _supervise(self, argv: list[str], cwd: Path, job: Job, run: Run) -> int:
        """Run `argv` under the supervisor, feeding its streams to `run` and `job`; its
        exit code. Cancellation kills the whole tree."""
        spawn = asyncio.ensure_future(spawn_split(argv, cwd))
        try:
            proc, err_fd = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                started, fd = await spawn
                os.close(fd)
                await kill_tree(started)
            raise
        assert proc.stdout is not None and proc.stderr is not None
        loop = asyncio.get_running_loop()
        err_stream = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(err_stream), os.fdopen(err_fd, "rb", 0)
        )
        pumps = {
            asyncio.ensure_future(self._pump(proc.stdout, run.out, job)),
            asyncio.ensure_future(self._pump(err_stream, run.err, job)),
        }
        status_reader = asyncio.ensure_future(proc.stderr.read())
        try:
            try:
                await asyncio.shield(proc.wait())
            except asyncio.CancelledError:
                await asyncio.shield(kill_tree(proc))
                raise
            # The supervisor killed any leftovers before exiting: the pipes close soon.
            await asyncio.wait({*pumps, status_reader}, timeout=2.0)
            status = read_status(status_reader.result()) if status_reader.done() else None
        finally:
            await asyncio.shield(kill_tree(proc, grace=0.0))
            for task in (*pumps, status_reader):
                task.cancel()
            transport.close()
        code = status.get("code") if status else None
        if not isinstance(code, int):
            code = proc.returncode if proc.returncode is not None else -1
        return code

    async def _pump(self, stream: asyncio.StreamReader, sink: Collector, job: Job) -> None:
        while block := await stream.read(65536):
            sink.feed(block)
            self.jobs.append(job, sink.channel, block.decode("utf-8", "replace"))

    def _profile(
        self, mode: SandboxMode, ctx: ToolContext, backend: Backend, workdir: Path
    ) -> Profile:
        workspace = ctx.cwd.resolve(strict=False)
        # Only homes that exist can be covered: bubblewrap cannot create a mount point on
        # the read-only root, and a home that does not exist holds nothing to hide.
        homes = [home for home in self.homes if home.is_dir()]
        hidden = hidden_paths(homes, workspace)
        return Profile(mode, workspace, hidden, backend.userns, workdir)


__all__ = ["BashTool", "Collector", "Run"]

"""Running command hooks around tool calls and turns, as native 0.1.0-rc.8's bridges do.

`Hooks.load` reads `hooks.json` (Claude Code) and `codex-hooks.json` (Codex) once, from
the launch directory; a missing file mounts nothing, an unusable one is logged and
mounts nothing of its bridge. `Hooks.around` runs one call: PreToolUse hooks (Claude
Code's bridge first; a deny ends the call with `Error: <reason>`, Claude Code's ask goes
to the approval chain), then the call (`Agent.run_checked`), then PostToolUse hooks on
whatever the call produced, a denial included (a block replaces the result with its
reason, failed; `additionalContext` reaches the model at the next step). Each hook is
`bash -c COMMAND` in the session's cwd, confined like the `bash` tool (bubblewrap or
Landlock below `danger-full-access`), with the tool environment (credentials removed),
the call's JSON on stdin, and its timeout (10 minutes by default); a hook that cannot
run, crashes or times out says nothing. The decisions are `core/hooks.py`. The turn
events (`session_start`, `enter`, `stopping`) are described in `core/hook_events.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
import tempfile
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from acp_plus.core import hook_events as he
from acp_plus.core import hooks as hk
from acp_plus.core.confine import Profile, bwrap_args, hidden_paths, landlock_args, unavailable
from acp_plus.core.sandbox import SandboxMode
from acp_plus.core.store import SessionLog
from acp_plus.core.tools.backend import Backend, find_backend
from acp_plus.core.tools.base import ToolResult
from acp_plus.core.tools.procs import become_subreaper, kill_tree, tool_env

log = logging.getLogger(__name__)


class HookedLoop(Protocol):
    """What the hooks need of the agent running the call or turn (`core/agent.py`)."""

    log: SessionLog
    cwd: Path
    sandbox: SandboxMode

    @property
    def running(self) -> bool: ...

    def defer(self, note: Any) -> None: ...

    def steer(self, content: list[dict[str, Any]], source: Any = None) -> bool: ...

    async def run_checked(
        self, turn: int, call_id: str, name: str, args: Any, ask: str | None = None
    ) -> ToolResult: ...


class Hooks:
    """The hook files of one acp-plus process, and the calls that go through them."""

    def __init__(
        self,
        files: Sequence[hk.HookFile],
        homes: Sequence[Path] = (),
        find: Callable[[], Backend | None] = find_backend,
    ) -> None:
        self.files = tuple(files)
        self.homes = tuple(home.resolve(strict=False) for home in homes)
        self.find = find
        self.started: dict[str, list[tuple[str, ...]]] = {}
        """SessionStart contexts waiting for their session's next step, by session id:
        each bridge's texts, one message each."""
        self._starting: set[asyncio.Task[None]] = set()

    @classmethod
    def load(cls, launch_dir: Path, homes: Sequence[Path] = ()) -> Hooks | None:
        """The hooks files in `launch_dir`, or None when there is none to run."""
        files = []
        for dialect, name in hk.FILES.items():
            path = launch_dir / name
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
                file = hk.parse_file(raw, dialect)
            except FileNotFoundError:
                continue
            except (OSError, ValueError) as exc:
                log.warning("hooks: could not load %s: %s; no %s hooks", path, exc, dialect)
                continue
            for why in file.skipped:
                log.warning("hooks: %s: skipping %s (only command hooks run)", path, why)
            files.append(file)
        return cls(files, homes) if files else None

    async def around(
        self, loop: HookedLoop, turn: int, call_id: str, name: str, args: Any
    ) -> ToolResult:
        """One tool call with its PreToolUse and PostToolUse hooks (module docstring)."""
        transcript = str(loop.log.lock_path.with_suffix(".jsonl"))  # the session's log
        call = hk.Call(loop.log.id, transcript, str(loop.cwd), turn, call_id, name, args)
        result: ToolResult | None = None
        for file in self.files:  # the bridges in rc.8's order: Claude Code's, then Codex's
            merged = await self._point(loop, file, hk.PRE, call)
            decided = hk.pre_decision(merged, file.dialect)
            if decided is not None and decided[0] == "deny":
                result = ToolResult.text(f"Error: {decided[1]}", is_error=True)
                break
            if decided is not None:
                result = await loop.run_checked(turn, call_id, name, args, decided[1] or hk.ASKED)
                break
        if result is None:
            result = await loop.run_checked(turn, call_id, name, args)
        response = hk.response_text(result.content)
        contexts: list[tuple[str, ...]] = []
        for file in self.files:
            merged = await self._point(loop, file, hk.POST, call, response)
            contexts.append(merged.contexts)  # in bridge order, a blocking bridge's included
            block = hk.post_block(merged)
            if block is not None:  # a block ends the chain: later bridges do not run
                result = ToolResult.text(block, is_error=True)
                break
        for texts in filter(None, contexts):  # one message per bridge, as rc.8 builds them
            loop.defer(_context_note(turn, texts))
        return result

    async def _point(
        self,
        loop: HookedLoop,
        file: hk.HookFile,
        event: str,
        call: hk.Call,
        response: str | None = None,
    ) -> hk.Merged:
        stdin = hk.stdin_text(file.dialect, event, call, response)
        return await self._event(loop, file, event, call.name, stdin)

    async def _event(
        self, loop: HookedLoop, file: hk.HookFile, event: str, query: str, stdin: str
    ) -> hk.Merged:
        """Every hook of `event` whose matcher selects `query`, run in turn, folded."""
        outputs = []
        for _matcher, command in hk.selected(file, event, query):
            env = hk.hook_env(file.dialect, str(loop.cwd))
            code, out, err = await self.run(command, stdin, env, loop.cwd, loop.sandbox)
            output = hk.decode(code, out, err, event)
            outputs.append(he.plain_context(output, file.dialect, event))
        return hk.merge(outputs)

    async def _turn_event(
        self, loop: HookedLoop, file: hk.HookFile, event: str, turn: int, value: str
    ) -> hk.Merged:
        transcript = str(loop.log.lock_path.with_suffix(".jsonl"))
        session = (loop.log.id, transcript, str(loop.cwd))
        stdin = he.payload_text(file.dialect, event, session, turn, **he.fields(event, value))
        query = value if event == he.SESSION_START else ""
        return await self._event(loop, file, event, query, stdin)

    def session_start(self, loop: HookedLoop, source: str) -> None:
        """Run the SessionStart hooks without waiting: their context reaches the session's
        next step (a running turn's next step boundary, else the next prompt's)."""
        if not any(he.SESSION_START in file.points for file in self.files):
            return

        async def start() -> None:
            contexts = [
                (await self._turn_event(loop, file, he.SESSION_START, 0, source)).contexts
                for file in self.files
            ]
            for texts in filter(None, contexts):  # one message per bridge
                blocks = [{"type": "text", "text": text} for text in texts]
                if not loop.steer(blocks, "hook-context"):
                    self.started.setdefault(loop.log.id, []).append(texts)

        task = asyncio.ensure_future(start())
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    async def enter(self, loop: HookedLoop, turn: int, inbox: list[Any]) -> bool:
        """A step about to take `inbox` (the agent's new input, in order, its own context
        last): SessionStart context that waited goes first, then UserPromptSubmit hooks
        decide. False: rejected, and `inbox` is emptied; else their context is appended."""
        waiting = self.started.pop(loop.log.id, [])
        inbox[:0] = [_context_note(turn, texts) for texts in waiting]
        own = ("workspace-instructions", "runtime-context")
        entering = [m for m in inbox if m.get("source") not in own]
        if not entering:
            return True
        prompt = he.prompt_text(entering)
        contexts: list[tuple[str, ...]] = []
        for file in self.files:  # Claude Code's bridge wraps Codex's: its reject comes first
            merged = await self._turn_event(loop, file, he.PROMPT_SUBMIT, turn, prompt)
            if merged.decision == "deny":
                inbox.clear()
                return False
            contexts.append(merged.contexts)
        # The outer bridge (Claude Code's) appends after the inner one's.
        inbox += [_context_note(turn, texts) for texts in reversed(contexts) if texts]
        return True

    async def stopping(self, loop: HookedLoop, turn: int) -> None:
        """The turn would end: each bridge's Stop hooks, in order; a block steers its text
        (the agent then runs another step)."""
        for file in self.files:
            if he.STOP not in file.points:
                continue
            text = he.stop_text(await self._turn_event(loop, file, he.STOP, turn, ""))
            if text is not None:
                loop.steer([{"type": "text", "text": text}], "hook-context")

    async def run(
        self, command: hk.Command, stdin: str, env: dict[str, str], cwd: Path, mode: SandboxMode
    ) -> tuple[int | None, str, str]:
        """Run one hook: (exit code or None, stdout, stderr). Never raises but for a
        cancellation, which kills the hook's whole tree first."""
        argv = ["bash", "-c", command.command]
        tmpdir: Path | None = None
        if mode != "danger-full-access":
            backend = await asyncio.to_thread(self.find)
            if backend is None:
                return None, "", unavailable(mode)
            workspace = cwd.resolve(strict=False)
            homes = [home for home in self.homes if home.is_dir()]
            profile = Profile(mode, workspace, hidden_paths(homes, workspace), backend.userns)
            if backend.kind == "bwrap":
                argv = [backend.executable, *bwrap_args(profile), *argv]
            else:
                if mode == "workspace-write":
                    tmpdir = Path(tempfile.mkdtemp(prefix="acp-plus-hook-"))
                argv = [*backend.prefix(), *landlock_args(profile, tmpdir), *argv]
        try:
            return await _communicate(argv, cwd, tool_env() | env, stdin, command.seconds())
        except OSError as exc:
            return None, "", str(exc)  # the hook cannot run: a non-blocking error
        finally:
            if tmpdir is not None:
                shutil.rmtree(tmpdir, ignore_errors=True)


def _context_note(turn: int, texts: tuple[str, ...]) -> dict[str, Any]:
    """One bridge's context for the model: a `user/message` of one text block each."""
    blocks = [{"type": "text", "text": text} for text in texts]
    note = {"type": "user/message", "id": str(uuid.uuid4()), "turn": turn}
    return note | {"content": blocks, "source": "hook-context"}


async def _communicate(
    argv: list[str], cwd: Path, env: dict[str, str], stdin: str, limit: float
) -> tuple[int | None, str, str]:
    become_subreaper()  # what the hook leaves behind reparents here, to be killed
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,  # its own group, so the whole tree can be killed
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode()), timeout=limit)
    except TimeoutError:
        await kill_tree(proc)
        return None, "", ""  # killed: no exit code, so no decision (rc.8's timeout)
    except asyncio.CancelledError:
        await asyncio.shield(kill_tree(proc))
        raise
    finally:
        with contextlib.suppress(Exception):
            await kill_tree(proc, grace=0.0)  # nothing of a finished hook stays running
    code = proc.returncode
    text = (out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))
    # A hook killed by a signal has no exit code to act on (rc.8: exitCode null).
    return (code if code is not None and code >= 0 else None), *text


__all__ = ["HookedLoop", "Hooks"]

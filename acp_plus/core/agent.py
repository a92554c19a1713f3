"""The model loop: stream a step, commit it, run its tools, repeat until a finish ends the turn.

Every state change is a committed event (`core/store.py`), and `on_event` is called
synchronously, in commit order, right after each commit; the ACP projection reads
nothing else. Cancellation (`Agent.cancel()` or cancelling the task awaiting
`run_turn`) aborts the model stream or the running tool, commits the streamed prefix,
and ends the turn `aborted`; it never waits longer than `cancel_grace` seconds on a tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, NamedTuple, cast

from acp_plus.core import events as ev
from acp_plus.core.approvals import ApprovalChain
from acp_plus.core.approvals.gate import Gate
from acp_plus.core.context import ModelContext, context_due
from acp_plus.core.history import (
    build_messages,
    interrupted_turn,
    last_route,
    last_turn,
    used_tokens,
)
from acp_plus.core.hook_runner import Hooks
from acp_plus.core.llm.base import ModelRequest, Router
from acp_plus.core.repeats import RepeatTracker
from acp_plus.core.sandbox import SandboxMode
from acp_plus.core.step import StepAccumulator, tool_calls
from acp_plus.core.store import SessionLog
from acp_plus.core.token_meter import reading
from acp_plus.core.tool_arguments import NOT_LOSSLESS_TEXT, lossless, parse_arguments
from acp_plus.core.tool_call import run_checked
from acp_plus.core.tool_schedule import concurrency_safe, groups, run_pool
from acp_plus.core.tools.base import ToolRegistry, ToolResult
from acp_plus.core.tools.spill import bound

log = logging.getLogger(__name__)

Src = ev.ContextSource | ev.SourceFields | None  # None: a prompt; else model context


class Route(NamedTuple):
    """Which model a turn runs on. `effort` None means the model's default effort."""

    provider: str
    model: str
    effort: str | None = None
    explicit_effort: bool = False


class TurnInProgress(RuntimeError):
    """`run_turn` was called while a turn is still running."""


class Agent:
    """Runs the turns of one session over its log."""

    def __init__(
        self,
        log: SessionLog,
        providers: Router,
        tools: ToolRegistry,
        approvals: ApprovalChain,
        cwd: Path | str,
        on_event: Callable[[dict[str, Any]], None],
        *,
        sandbox: SandboxMode = "workspace-write",
        context: ModelContext | None = None,
        cancel_grace: float = 5.0,
        gate: Gate | None = None,
    ):
        self.log = log
        self.providers = providers
        self.tools = tools
        self.approvals = approvals
        self.cwd = Path(cwd)
        self.on_event = on_event
        self.sandbox: SandboxMode = sandbox
        self.context = context or ModelContext()
        self._repeats = RepeatTracker()
        self.cancel_grace = cancel_grace
        self.gate = gate  # the approval features (core/approvals/gate.py), when configured
        self.hooks: Hooks | None = None  # command hooks (core/hook_runner.py), when configured
        self.waiter: Callable[[], Awaitable[bool]] | None = None  # children running (subagents)
        self._inner: asyncio.Task[ev.TurnEndReason] | None = None
        self._inbox: list[ev.UserMessage] = []  # committed in order at the next step boundary
        self._claimed: list[ev.UserMessage] = []  # the inbox a step took, during its pre-step work
        self._hooked: list[ev.UserMessage] = []  # hooks' context of the running call
        self._cancel_requested = False
        self._cancel_event = asyncio.Event()
        # Turn tasks that ignored cancellation past `cancel_grace`: late commits dropped.
        self._orphans: set[asyncio.Task[Any]] = set()
        self._model: tuple[str, bool] = ("", False)  # the turn's model, whether it takes images

    # -- state -------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether a turn is in progress."""
        inner = self._inner
        return inner is not None and not inner.done() and inner not in self._orphans

    @property
    def turn_model(self) -> tuple[str, bool]:
        """The running turn's model, and whether it declares image input."""
        return self._model

    def used_tokens(self) -> int:
        """The token meter for `usage_update.used` (see `history.used_tokens`)."""
        return used_tokens(self.log.events())

    def commit(self, event: Any) -> dict[str, Any]:
        """Append an event to the log, then hand the committed form to `on_event` (a failing
        one is logged, not raised: delivery must not corrupt the loop's state)."""
        if asyncio.current_task() in self._orphans:
            log.warning("dropped %s from an abandoned turn", event.get("type"))
            return dict(event)
        committed = self.log.append(event)
        try:
            self.on_event(committed)
        except Exception:
            log.exception("on_event failed for %s", committed.get("type"))
        return committed

    def settle_interrupted(self) -> dict[str, Any] | None:
        """Commit `turn/end{interrupted}` for a turn a crash left open; None if none was."""
        turn = interrupted_turn(self.log.events())
        return None if turn is None else self.commit(ev.turn_end(turn, "interrupted"))

    def record_route(self, route: Route | tuple[Any, ...]) -> dict[str, Any] | None:
        """Commit `route/set` if `route` differs from the last logged one (for resume, §1.5)."""
        r = Route(*route)
        last = last_route(self.log.events())
        held = last and (last["provider"], last["model"], last["effort"], last["explicitEffort"])
        return None if held == tuple(r) else self.commit(ev.route_set(*r))

    # -- control -----------------------------------------------------------------------

    def cancel(self, keep_inbox: bool = False) -> bool:
        """Abort the running turn; True if one ran. Like native's, it drops the inbox (a
        notice a failed step left), idle or not, unless `keep_inbox` (interrupt_agent)."""
        if not keep_inbox:
            self._inbox.clear()
            self._claimed.clear()
        if not self.running:
            return False
        assert self._inner is not None
        self._cancel_requested = True
        self._cancel_event.set()
        self._inner.cancel()
        return True

    def steer(self, content: list[dict[str, Any]], source: Src = None) -> bool:
        """Queue user content (with a `source`: model context, such as a job's notice) for
        the running turn's next step boundary; False (nothing queued) when no turn runs."""
        if not self.running:
            return False
        message = ev.user_message(str(uuid.uuid4()), last_turn(self.log.events()), content)
        self._inbox.append(ev.with_source(message, source))
        return True

    async def run_turn(
        self, content: list[dict[str, Any]], route: Route | tuple[Any, ...], source: Src = None
    ) -> ev.TurnEndReason:
        """Run one turn for the admitted `content` and return its `turn/end` reason; with
        a `source`, `content` is model context (a job notice waking an idle session).
        Raises `TurnInProgress` if a turn is running. If the awaiting task is cancelled,
        the turn is ended `aborted` and the cancellation propagates.
        """
        if self.running:
            raise TurnInProgress("a turn is already running")
        r = Route(*route)
        turn = last_turn(self.log.events()) + 1
        # What a failed step left steered (a child's notice) comes first, as on native.
        self._inbox = [cast(ev.UserMessage, {**m, "turn": turn}) for m in self._inbox]
        self._cancel_requested = False
        self._cancel_event = asyncio.Event()
        self.commit(ev.turn_start(turn))
        message = ev.user_message(str(uuid.uuid4()), turn, content)
        self._inbox.append(ev.with_source(message, source))
        self._repeats.reset()
        # Native's order: the prompt, the workspace instructions (first turn), the runtime
        # context (when it changed); all part of the model's history.
        for origin, text in context_due(self.log.events(), self.context):
            self._inbox.append(ev.context_message(str(uuid.uuid4()), turn, origin, text))
        if self.hooks is None:  # else the first step's hooks see it first (hook_runner.enter)
            for queued in self._inbox:
                self.commit(queued)
            self._inbox.clear()
        self.record_route(r)
        inner = asyncio.create_task(self._loop(turn, r))
        self._inner = inner
        try:
            await self._wait_turn(inner)
        except asyncio.CancelledError:
            inner.cancel()
            await self._drain(inner, swallow_cancel=True)
            self.commit(ev.turn_end(turn, "aborted"))
            raise
        if not inner.done() or inner.cancelled():
            reason: ev.TurnEndReason = {"kind": "aborted"}
        elif (exc := inner.exception()) is not None:
            log.error("turn %d failed", turn, exc_info=exc)
            why = str(exc) or type(exc).__name__
            reason = {"kind": "error", "error": {"message": why, "code": "INTERNAL"}}
        else:
            reason = inner.result()
        self.commit(ev.turn_end(turn, reason["kind"], reason.get("error")))
        return reason

    async def _wait_turn(self, inner: asyncio.Task[Any]) -> None:
        """Wait for the turn task; after `cancel()`, wait at most `cancel_grace` more."""
        cancelled = asyncio.ensure_future(self._cancel_event.wait())
        try:
            await asyncio.wait({inner, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancelled.cancel()
        if not inner.done():
            await self._drain(inner)

    async def _drain(self, inner: asyncio.Task[Any], *, swallow_cancel: bool = False) -> None:
        # Bounded: a tool that swallows cancellation must not hang the session.
        try:
            await asyncio.wait({inner}, timeout=self.cancel_grace)
        except asyncio.CancelledError:
            if not swallow_cancel:
                raise
        if not inner.done():
            log.warning(
                "turn task ignored cancellation for %.1fs; abandoning it", self.cancel_grace
            )
            self._orphans.add(inner)
            inner.add_done_callback(self._orphans.discard)

    def _check_cancel(self) -> None:
        # A tool or responder may swallow the CancelledError; the turn still stops here.
        if self._cancel_requested:
            raise asyncio.CancelledError

    # -- the loop ----------------------------------------------------------------------

    async def _loop(self, turn: int, route: Route) -> ev.TurnEndReason:
        effort = route.effort or None  # "" is "provider default" in config options (§1.5)
        info = await self.providers.find_model(route.provider, route.model)
        self._model = (route.model, "image" in (info.get("inputModalities", []) if info else []))
        if effort is None:
            reasoning = info.get("reasoning") if info else None
            if reasoning and "defaultEffort" in reasoning:
                effort = reasoning["defaultEffort"]
        route_ref: ev.RouteRef = {
            "provider": route.provider,
            "model": route.model,
            "effort": effort,
        }
        hit_ceiling = False
        while True:
            self._check_cancel()
            step_input = await self._step_input(turn)
            if step_input is None:
                return {"kind": "completed"}  # a UserPromptSubmit hook rejected the step
            for queued in step_input:  # steered, then the tools' context (skills)
                self.commit(queued)
                if "source" not in queued:  # a user's message: repetition across it is no loop
                    self._repeats.reset()
            request = ModelRequest(
                provider=route.provider,
                model=route.model,
                messages=build_messages(self.log.events()),
                tools=self.tools.specs(),  # sorted by name, as native's
                reasoning_effort=effort,
                system=self.context.system(route.model),
                session_id=self.log.id,
            )
            step = await self._stream_step(turn, request, route_ref)
            empty = {"message": "the model stream ended without a finish", "code": "EMPTY_RESPONSE"}
            finish = step.finish or {"kind": "error", "failure": empty}
            kind = finish.get("kind")
            if kind in ("error", "aborted"):
                failure = finish.get("failure") or {}
                why = str(failure.get("message", "provider failure"))
                code = str(failure.get("code", "PROVIDER_ERROR"))
                return {"kind": "error", "error": {"message": why, "code": code}}
            blocks = step.committed_blocks()
            if blocks or step.usage is not None:
                message = ev.assistant_message(str(uuid.uuid4()), turn, blocks, route_ref)
                if step.usage is not None:  # with native's token meter reading (usage_update)
                    message |= {"usage": step.usage, "meter": reading(request, blocks, step.usage)}
                self.commit(message)
            # Steered text (§6.6) gets one more step; the turn still ends max-tokens (§3.1).
            hit_ceiling = hit_ceiling or kind == "max-tokens"
            calls = [] if kind == "max-tokens" else tool_calls(blocks)
            if not calls:  # (a prompt holds for running children: LiveSession)
                if not self._inbox and self.hooks is not None:
                    await self.hooks.stopping(self, turn)  # a blocking Stop hook steers
                if self._inbox:
                    continue
                return {"kind": "max-tokens" if hit_ceiling else "completed"}
            for group in groups(calls, self._concurrency_safe):  # native's scheduling
                if len(group) == 1:
                    self._check_cancel()
                    await self._run_tool(turn, group[0])
                else:
                    await run_pool(
                        group,
                        lambda call: self._announce(turn, call),
                        lambda call: self._tool_result(turn, *_identity(call)),
                        lambda call, result: self._settle(turn, call, result),
                        self._check_cancel,
                    )
                if self.gate is not None and self.gate.stopped(turn):
                    return {"kind": "blocked"}  # the reviewer's circuit breaker stopped it
            if self.tools.concluded:  # native's concludeTurn: no further step
                return {"kind": "max-tokens" if hit_ceiling else "completed"}

    async def _stream_step(
        self, turn: int, request: ModelRequest, route_ref: ev.RouteRef
    ) -> StepAccumulator:
        step = StepAccumulator()
        try:
            async with contextlib.aclosing(self.providers.stream(request)) as stream:
                async for chunk in stream:
                    if step.feed(chunk) is not None:
                        break
        except asyncio.CancelledError:
            # A user abort keeps what the user already saw streaming (§2).
            prefix = step.abort_prefix()
            if prefix:
                self.commit(ev.assistant_message(str(uuid.uuid4()), turn, prefix, route_ref))
            raise
        return step

    def _concurrency_safe(self, call: dict[str, Any]) -> bool:
        _call_id, name, raw = _identity(call)
        return concurrency_safe(self.tools.get(name), parse_arguments(raw))

    def _announce(self, turn: int, call: dict[str, Any]) -> None:
        self.commit(ev.tool_call(turn, *_identity(call)))

    async def _step_input(self, turn: int) -> list[ev.UserMessage] | None:
        """The inbox, claimed first as native's pre-step does (before the hooks and the skill
        catalog: a notice arriving meanwhile waits a step); None: a hook rejected the step."""
        self._claimed, self._inbox = self._inbox, []
        try:
            if self.hooks is not None and not await self.hooks.enter(self, turn, self._claimed):
                return None
            notes = await self.tools.step_context(self.log.events(), self._claimed, self.cwd, turn)
        except asyncio.CancelledError:
            self._inbox[:0] = self._claimed  # cancel() emptied it, unless it keeps the inbox
            raise
        return [*self._claimed, *notes]

    async def _run_tool(self, turn: int, call: dict[str, Any]) -> None:
        self._announce(turn, call)
        self._settle(turn, call, await self._tool_result(turn, *_identity(call)))

    def _settle(self, turn: int, call: dict[str, Any], result: ToolResult) -> None:
        call_id, name, raw = _identity(call)
        # Native's spill-policy: an oversized result reaches the model (and the client) cut.
        result = bound(result, name, self.log.id, self._model[1])
        self.commit(ev.tool_result(turn, call_id, result.content, result.is_error))
        reminder = self._repeats.observe(name, raw)
        if reminder is not None:
            # As native: at the next step boundary, not between the step's results.
            note = ev.context_message(str(uuid.uuid4()), turn, "repeat-reminder", reminder)
            self._inbox.append(note)
        self._inbox, self._hooked = self._inbox + self._hooked, []  # rc.8: reminder, context

    def defer(self, note: ev.UserMessage) -> None:  # a hook's context, queued after the call
        self._hooked.append(note)

    async def _tool_result(self, turn: int, call_id: str, name: str, raw: str) -> ToolResult:
        # Native's order: the arguments' JSON round trip, then the name, then their shape.
        args = parse_arguments(raw)
        if not lossless(args):
            return ToolResult.text(NOT_LOSSLESS_TEXT, is_error=True)
        if self.hooks is not None:  # rc.8's hooks, before and after the rest (hook_runner.py)
            return await self.hooks.around(self, turn, call_id, name, args)
        return await self.run_checked(turn, call_id, name, args)

    async def run_checked(
        self, turn: int, call_id: str, name: str, args: Any, ask: str | None = None
    ) -> ToolResult:
        """A call past its arguments' round trip: `ask` (a hook's question) first."""
        return await run_checked(self, turn, call_id, name, args, ask)


def _identity(call: dict[str, Any]) -> tuple[str, str, str]:
    """A call's id, name and arguments as the model wrote them (JSON text)."""
    raw = call.get("arguments", "")
    raw = raw if isinstance(raw, str) else json.dumps(raw)
    return str(call.get("id", "")), str(call.get("name", "")), raw

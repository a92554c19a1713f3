"""Live ACP sessions: the one-prompt slot, the ordered output queue, cancel and settlement.

A `LiveSession` wraps one core `Agent`. Committed events arrive through the agent's
`on_event` (synchronously, in commit order); each is projected (`updates.project`) and
put on the session's `OutputQueue`, a single serial sender, so the wire order is the
commit order. The queue is drained before a prompt settles (§2: every update precedes
the `session/prompt` response) and before each permission request (§4: the `tool_call`
precedes its `session/request_permission`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from acp_plus.core.agent import Agent, Route
from acp_plus.core.approvals import ApprovalRequest
from acp_plus.core.attachments import AttachmentStore, ImagePolicyError
from acp_plus.core.events import ApprovalOutcome
from acp_plus.core.store import SessionLocked
from acp_plus.live.output_queue import OutputQueue, Send
from acp_plus.live.prompt_run import PromptRun, Settling
from acp_plus.protocol import model_control
from acp_plus.protocol.content import (
    ContentError,
    admit,
    check_image_modalities,
    check_image_store,
    image_route,
    images,
    route_unverified,
    store_failure,
    with_digests,
)
from acp_plus.protocol.settlement import settle
from acp_plus.protocol.updates import DeliveryError, context_used, project
from acp_plus.wire.errors import RpcError, internal_error, invalid_params, session_closing
from acp_plus.wire.rpc import RequestContext

log = logging.getLogger("acp_plus.live.sessions")

PROMPT_IN_FLIGHT = "a prompt is already in flight for this session"

PERMISSION_OPTIONS: list[dict[str, str]] = [
    {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
]

ClientRequest = Callable[[str, Any], Awaitable[Any]]
ResolveModalities = Callable[[str, str], Awaitable[Sequence[str] | None]]
"""A route's declared input modalities (None: the model declares none); may raise."""


def permission_params(session_id: str, call_id: str) -> dict[str, Any]:
    """`session/request_permission` params, exactly as §4 fixes them."""
    return {
        "sessionId": session_id,
        "toolCall": {"toolCallId": call_id},
        "options": [dict(option) for option in PERMISSION_OPTIONS],
    }


def permission_outcome(response: Any) -> ApprovalOutcome:
    """Map the client's answer (§4): `cancelled`; `selected allow-once`; any other
    selection is `rejected`. A malformed answer raises, which fails closed."""
    outcome = response.get("outcome") if isinstance(response, Mapping) else None
    if not isinstance(outcome, Mapping):
        raise ValueError(f"malformed permission response: {response!r}")
    if outcome.get("outcome") == "cancelled":
        return "cancelled"
    if outcome.get("outcome") == "selected":
        return "allowed-once" if outcome.get("optionId") == "allow-once" else "rejected"
    raise ValueError(f"malformed permission outcome: {outcome!r}")


@dataclass
class RouteInfo:
    """What the core knows about the selected model: reasoning and context window."""

    reasoning: model_control.Reasoning | None
    context_window: int | None
    input_modalities: tuple[str, ...] = ("text",)


class LiveSession:
    """One session owned by this connection."""

    def __init__(
        self,
        session_id: str,
        cwd: str,
        *,
        send: Send,
        client_request: ClientRequest,
        image_advertised: Callable[[], bool],
        attachments: AttachmentStore | None = None,
        resolve_modalities: ResolveModalities | None = None,
    ) -> None:
        self.id = session_id
        self.cwd = cwd
        self.queue = OutputQueue(lambda update: send({"sessionId": session_id, "update": update}))
        self._client_request = client_request
        self._image_advertised = image_advertised
        self._attachments = attachments
        self._resolve_modalities = resolve_modalities
        self.selection: model_control.Selection | None = None
        self.route_info = RouteInfo(None, None)
        self.agent: Agent | None = None
        self.run: PromptRun | None = None
        self._settled = asyncio.Event()
        self._settled.set()
        self._closing: asyncio.Task[None] | None = None
        self.on_close: list[Callable[[], Awaitable[None]]] = []
        self.config_lock = asyncio.Lock()
        """Serializes `set_config_option` so mutations apply in arrival order (§1.5)."""
        self.roots: tuple[str, ...] = ()
        """The session's validated additional directories (§6.2), besides `cwd`."""
        self.commands: set[asyncio.Task[Any]] = set()
        """Slash commands running now (§6.4): session/cancel and close abort them."""
        self.settling: Settling | None = None
        """A turn a settling prompt holds for (the goal driver's next round)."""
        self.on_settled: list[Callable[[], None]] = []
        """Called once a prompt has settled and the session's slot is free."""

    # -- wiring --------------------------------------------------------------------------

    def attach(self, agent: Agent) -> None:
        """Bind the core agent (created with `self.on_event` and `self.ask_permission`).

        Takes the session log's write lock, held until close: one writer per session
        across processes. Live in another process: -32602 `session is already active`.
        """
        try:
            agent.log.acquire()
        except SessionLocked:
            raise invalid_params(f"session is already active: {self.id}") from None
        self.agent = agent

    @property
    def closing(self) -> bool:
        """Whether `session/close` (or teardown) has started."""
        return self._closing is not None

    def on_event(self, event: dict[str, Any]) -> None:
        """Project one committed event onto the output queue (called in commit order)."""
        run = self.run
        kind = event.get("type")
        if kind == "turn/start" and run is not None and run.turn is None:
            run.turn = int(event["turn"])
        usage = event.get("usage")
        try:
            updates = project(
                event,
                context_window=self.route_info.context_window,
                used_tokens=_meter(event) if isinstance(usage, Mapping) else None,
            )
        except DeliveryError as exc:
            if kind == "assistant/message" and run is not None and event.get("turn") == run.turn:
                run.delivery_failure = exc.message
            log.warning("dropped %s updates: %s", kind, exc.message)
            return
        for update in updates:
            self.queue.put(update)

    async def ask_permission(self, request: ApprovalRequest) -> ApprovalOutcome | None:
        """The ACP approval responder (§4); requests of other sessions pass on."""
        if request.session_id != self.id or not request.call_id:
            return None
        await self.queue.drain()
        response = await self._client_request(
            "session/request_permission", permission_params(self.id, request.call_id)
        )
        return permission_outcome(response)

    # -- prompt --------------------------------------------------------------------------

    def turn_route(self) -> Route | None:
        """The route a prompt admitted now runs on (fixed at admission, §1.5)."""
        if self.selection is None:
            return None
        sel = self.selection
        effort = model_control.resolved_effort(sel, self.route_info.reasoning)
        return Route(sel.provider, sel.model, effort, sel.effort is not None)

    async def prompt(self, blocks: Any, ctx: RequestContext) -> dict[str, Any]:
        """Serve `session/prompt`: slot, admission, turn, drain, settlement (§3.2, §5)."""
        if self.closing:
            raise session_closing(self.id)
        if self.run is not None:
            raise invalid_params(PROMPT_IN_FLIGHT)
        run = PromptRun()
        self.run = run
        self._settled.clear()
        watcher = asyncio.get_running_loop().create_task(self._watch_abort(ctx, run))
        try:
            return await self._prompt(run, blocks)
        finally:
            watcher.cancel()
            self.run = None
            self._settled.set()
            run.done.set()
            for settled in self.on_settled:
                settled()

    async def _watch_abort(self, ctx: RequestContext, run: PromptRun) -> None:
        # `$/cancel_request` for this prompt request behaves exactly like session/cancel.
        await ctx.aborted.wait()
        self._cancel_run(run)

    async def _prompt(self, run: PromptRun, blocks: Any) -> dict[str, Any]:
        await asyncio.sleep(0)  # let an already-aborted request's watcher run first
        # The route is snapshotted once: image admission checks the route the turn runs on.
        route = self.turn_route()
        try:
            if not isinstance(blocks, list):
                raise ContentError("invalid", "unsupported ACP prompt content")
            content = admit(blocks, image_advertised=self._image_advertised())
            if any(part["type"] == "image" for part in content):
                stored = await self._store_images(run, content, route)
                if stored is None:
                    return {"stopReason": "cancelled"}
                content = stored
        except ContentError as exc:
            if run.cancel_requested:
                return {"stopReason": "cancelled"}
            raise exc.to_rpc() from None
        if run.cancel_requested:
            return {"stopReason": "cancelled"}
        if route is None or self.agent is None:
            raise internal_error("prompt was not queued: no model route is configured")
        if not self.agent.log.locked:
            # Unreachable through the server (attach locks); never write unlocked.
            raise invalid_params(f"session is not writable in this process: {self.id}")
        while self.agent.running and not run.cancel_requested:
            await asyncio.sleep(0.02)  # a turn of the agent's own (a job notice) ends first
        if run.cancel_requested:
            return {"stopReason": "cancelled"}
        try:
            # run_turn commits turn/start synchronously before its first await, so a
            # cancel arriving from here on finds the agent running.
            run.holding = True
            reason: Mapping[str, Any] | None = await self.agent.run_turn(content, route)
        except Exception as exc:
            if run.turn is None:
                raise internal_error(f"prompt was not queued: {exc}") from exc
            raise internal_error(f"prompt settlement failed: {exc}") from exc
        reason = await run.hold(self.agent, reason, self.settling)
        await self.queue.drain()
        outcome = settle(
            cancel_requested=run.cancel_requested,
            delivery_failure=run.delivery_failure,
            turn_end=reason,
        )
        if isinstance(outcome, RpcError):
            raise outcome
        return outcome

    def wake(self, content: list[dict[str, Any]], source: Any) -> bool:
        """Run a turn for a notice reaching the idle agent of a prompt that has not
        settled yet; False when none holds (the caller wakes the session itself)."""
        run, route, agent = self.run, self.turn_route(), self.agent
        if run is None or agent is None or route is None:
            return False
        return run.wake(lambda: agent.run_turn(content, route, source))

    async def _store_images(
        self, run: PromptRun, content: list[dict[str, Any]], route: Route | None
    ) -> list[dict[str, Any]] | None:
        """§5 images: store mounted, route resolves and declares image input, then one
        batch write. Returns the content with digests, or None if cancelled around the
        write. Raises ContentError for every refusal."""
        check_image_store(self._attachments is not None)
        assert self._attachments is not None
        provider, model = image_route(
            route.provider if route else None,
            route.model if route else None,
            llm_mounted=self._resolve_modalities is not None,
        )
        assert self._resolve_modalities is not None
        try:
            modalities = await self._resolve_modalities(provider, model)
        except Exception as exc:
            log.warning("resolving %s/%s for image input failed: %s", provider, model, exc)
            raise route_unverified() from None
        check_image_modalities(model, modalities)
        if run.cancel_requested:
            return None
        try:
            # Decoding and writing both run off the event loop (up to tens of MiB).
            store = self._attachments
            digests = await asyncio.to_thread(lambda: store.save_batch(images(content)))
        except ImagePolicyError as exc:
            raise store_failure(str(exc), policy=True) from None
        except Exception as exc:
            log.warning("storing the prompt image batch failed: %s", exc)
            raise store_failure(str(exc), policy=False) from None
        if run.cancel_requested:
            # The images stay stored (content-addressed, unreferenced); no turn starts.
            return None
        return with_digests(content, digests)

    # -- cancel and close ----------------------------------------------------------------

    def _cancel_run(self, run: PromptRun) -> None:
        run.cancel()
        if self.agent is not None:
            self.agent.cancel()

    def cancel(self) -> None:
        """`session/cancel`: cancel the prompt in flight, or any autonomous agent work,
        and any running slash command (§6.4)."""
        for command in self.commands:
            command.cancel()
        if self.run is not None:
            self._cancel_run(self.run)
        elif self.agent is not None:
            self.agent.cancel()

    def close(self) -> asyncio.Task[None]:
        """Start (or join) closing: cancel, wait for the prompt to settle, release."""
        if self._closing is None:
            self._closing = asyncio.get_running_loop().create_task(self._close())
        return self._closing

    async def _close(self) -> None:
        self.cancel()
        await self._settled.wait()
        await self.queue.drain()
        errors: list[str] = []
        for release in self.on_close:
            try:
                await release()
            except Exception as exc:
                errors.append(str(exc) or type(exc).__name__)
        if self.agent is not None:
            self.agent.log.release()
        if errors:
            raise RuntimeError("; ".join(errors))


async def close_all(sessions: list[LiveSession], timeout: float) -> list[str]:
    """Close sessions concurrently within `timeout`; returns one message per failure."""
    if not sessions:
        return []
    tasks = {session.close(): session for session in sessions}
    done, pending = await asyncio.wait(tasks, timeout=timeout)
    failures: list[str] = []
    for task in done:
        if (exc := task.exception()) is not None:
            failures.append(f"{tasks[task].id}: {exc}")
    for task in pending:
        task.cancel()
        failures.append(f"{tasks[task].id}: close timed out")
    if pending:
        await asyncio.wait(pending, timeout=0.2)
    return failures


def _meter(event: Mapping[str, Any]) -> int:
    """The step's token meter reading (`core.token_meter`); a log written before the
    meter has only the provider's count."""
    meter = event.get("meter")
    return meter if isinstance(meter, int) else context_used(event["usage"])

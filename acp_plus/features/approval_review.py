"""The approval reviewer of one session: routing, overrides, budgets, the model call,
and `/approval-review` (docs/approvals.md).

The pure decisions are the core's (`core/approvals/reviewer.py`, `review_state.py`);
this module asks the model through the session's router, commits what happened
(`approval/reviewed`), and keeps the session's switches in its log
(`approval/review-set`), so `on`/`off` and `model` survive a restart; an override of
`approve` lives in memory only, for `override_seconds`, and is used once.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp_plus.core.approvals import ApprovalRequest
from acp_plus.core.approvals import reviewer as rv
from acp_plus.core.approvals.gate import Decision, Gate
from acp_plus.core.approvals.review_state import ReviewState
from acp_plus.core.approvals.settings import ReviewerSettings
from acp_plus.core.history import last_route
from acp_plus.core.step import StepAccumulator

if TYPE_CHECKING:
    from acp_plus.core.agent import Agent

REVIEW_SET = "approval/review-set"
REVIEWED = "approval/reviewed"
USAGE = (
    "Usage: /approval-review on | off | status | approve [n] | model <provider>/<model> "
    "| model session"
)


@dataclass(frozen=True)
class Override:
    """`/approval-review approve`: one call of `tool` with exactly `raw` arguments."""

    tool: str
    raw: str
    expires: float


class SessionReviewer:
    """The reviewer decider of one session (`Gate.deciders`)."""

    def __init__(
        self,
        settings: ReviewerSettings,
        agent: Agent,
        gate: Gate,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.agent = agent
        self.gate = gate
        self.clock = clock
        self.state = ReviewState(settings)
        self.overrides: list[Override] = []

    # -- the switches, from the log ------------------------------------------------------

    def switches(self) -> tuple[bool, str | None, str | None]:
        """Whether review is on, and the reviewer's provider and model (None: the session's)."""
        on, provider, model = True, self.settings.provider, self.settings.model
        for event in self.agent.log.events():
            if event.get("type") == REVIEW_SET:
                on = bool(event.get("enabled", on))
                if "model" in event:
                    provider, model = event.get("provider"), event.get("model")
        return on, provider, model

    def _route(self, tool: str) -> str:
        for rule in self.settings.routes:
            if fnmatch.fnmatchcase(tool, rule.tool):
                return rule.route
        return self.settings.default_route

    # -- deciding ------------------------------------------------------------------------

    async def decide(self, request: ApprovalRequest, turn: int) -> Decision | None:
        """A decision for the question, or None to hand it to the client."""
        raw = _raw_arguments(self.agent.log.events(), turn, request.call_id)
        now = self.clock()
        self.overrides = [o for o in self.overrides if o.expires > now]
        for override in self.overrides:
            if override.tool == request.tool and override.raw == raw:
                self.overrides.remove(override)
                return Decision("allowed-once", {"source": "override"})
        on, provider, model = self.switches()
        if not on:
            return None
        route = self._route(request.tool)
        if route == "human":
            return None
        if route == "never":
            reason = f'the reviewer\'s routing never allows tool "{request.tool}"'
            return Decision("rejected", {"source": "policy", "reason": reason}, f"Error: {reason}")
        self.state.start(turn)
        stop = self.state.tripped()
        if stop is not None:
            why = f"circuit breaker open: {stop}"
            if self.settings.on_breaker == "stop":
                self.gate.stopped_turn = turn  # the loop ends the turn after this call
                why += "; the turn was stopped"
            return self._policy(self.settings.on_breaker, why)
        spent = self.state.over_budget()
        if spent is not None:
            return self._policy(self.settings.on_budget, spent)
        verdict = await self._ask(request, raw or "", turn, provider, model)
        if isinstance(verdict, str):
            self.state.record(None)
            self._commit_review(turn, request.call_id, {"failure": verdict})
            return self._policy(self.settings.on_failure, f"reviewer failure: {verdict}")
        self.state.record(verdict.decision == "deny")
        self._commit_review(turn, request.call_id, {"verdict": verdict.__dict__})
        facts = {"source": "reviewer", "risk": verdict.risk, "reason": verdict.reason}
        judged = rv.judge(verdict, self.settings)
        if judged == "allow":
            return Decision("allowed-once", facts)
        if judged == "deny":
            if verdict.suggestion:
                facts["suggestion"] = verdict.suggestion
            return Decision("rejected", facts, rv.denial_text(request.tool, verdict))
        policy = self.settings.on_high_risk if judged == "high-risk" else self.settings.on_uncertain
        why = (
            f"the reviewer allowed at risk {verdict.risk}, above the cap {self.settings.risk_cap}"
            if judged == "high-risk"
            else "the reviewer was uncertain"
        )
        return self._policy(policy, why)

    def _policy(self, policy: str, why: str) -> Decision | None:
        if policy == "human":
            return None  # the client decides; the ledger shows its answer
        return Decision(
            "rejected", {"source": "policy", "reason": why}, f"Error: not approved: {why}"
        )

    def _commit_review(self, turn: int, call_id: str, what: dict[str, Any]) -> None:
        self.agent.commit({"type": REVIEWED, "turn": turn, "callId": call_id, **what})

    async def _ask(
        self,
        request: ApprovalRequest,
        raw: str,
        turn: int,
        provider: str | None,
        model: str | None,
    ) -> rv.Verdict | str:
        if provider is None or model is None:
            route = last_route(self.agent.log.events())
            if route is None:
                return "no model to review with"
            provider, model = route["provider"], route["model"]
        context = _last_user_text(self.agent.log.events())
        pack = rv.evidence(
            request.tool,
            raw,
            request.reason,
            str(self.agent.cwd),
            context,
            self.settings.evidence_cap,
        )
        req = rv.request(pack, provider, model, self.agent.log.id)
        step = StepAccumulator()

        async def collect() -> None:
            async with contextlib.aclosing(self.agent.providers.stream(req)) as stream:
                async for chunk in stream:
                    if step.feed(chunk) is not None:
                        break

        try:
            await asyncio.wait_for(collect(), self.settings.timeout)
        except TimeoutError:
            return f"no answer within {self.settings.timeout:g} s"
        except Exception as exc:  # transport errors: a failure, never an allow
            return f"the request failed: {exc}"
        finish = step.finish or {}
        if finish.get("kind") != "stop":
            return f"the answer ended with {finish.get('kind', 'no finish')}"
        text = "".join(
            b.get("text", "") for b in step.committed_blocks() if b.get("type") == "text"
        )
        return rv.parse_verdict(text, self.settings.reason_cap)

    # -- /approval-review ----------------------------------------------------------------

    def command(self, args: str) -> str:
        """What `/approval-review <args>` says (and does)."""
        words = args.split()
        verb = words[0] if words else "status"
        if verb in ("on", "off"):
            self.agent.commit({"type": REVIEW_SET, "enabled": verb == "on"})
            return (
                f"Approval review is {verb} for this session "
                "(kept in the session log: it survives a restart)."
            )
        if verb == "status":
            return self._status()
        if verb == "approve":
            return self._approve(words[1:])
        if verb == "model" and len(words) == 2:
            if words[1] == "session":
                self.agent.commit({"type": REVIEW_SET, "provider": None, "model": None})
                return "The reviewer now uses the session's model (kept in the session log)."
            provider, _, model = words[1].partition("/")
            if provider and model:
                self.agent.commit({"type": REVIEW_SET, "provider": provider, "model": model})
                return f"The reviewer now uses {provider}/{model} (kept in the session log)."
        return USAGE

    def _status(self) -> str:
        on, provider, model = self.switches()
        s, state = self.settings, self.state
        lines = [
            f"Approval review: {'on' if on else 'off'}",
            f"Reviewer model: {f'{provider}/{model}' if provider else 'the session model'}",
            f"Default route: {s.default_route}; risk cap: {s.risk_cap}",
            f"This turn: {state.reviews} of {s.max_reviews_per_turn} reviews, "
            f"{state.failures} of {s.max_failures_per_turn} failures",
            f"Circuit breaker: {state.tripped() or 'closed'}",
            f"Pending overrides: {len(self.overrides)}",
        ]
        return "\n".join(lines)

    def _approve(self, rest: list[str]) -> str:
        n = int(rest[0]) if rest and rest[0].isdigit() else 1
        events = self.agent.log.events()
        denied = [
            e
            for e in events
            if e.get("type") == "approval/decided"
            and e.get("source") == "reviewer"
            and e.get("outcome") == "rejected"
        ]
        if n < 1 or n > len(denied):
            return f"No reviewer denial {n} in this session ({len(denied)} so far)."
        target = denied[-n]
        raw = _raw_arguments(events, int(target["turn"]), str(target["callId"]))
        tool = _tool_name(events, int(target["turn"]), str(target["callId"]))
        if raw is None or tool is None:
            return f"Reviewer denial {n} has no tool call to override."
        expires = self.clock() + self.settings.override_seconds
        self.overrides.append(Override(tool, raw, expires))
        minutes = self.settings.override_seconds / 60
        return (
            f"Override set: the next {tool} call with byte-identical arguments in the next "
            f"{minutes:g} minutes runs without review, once (not kept across a restart)."
        )


def _call(events: list[dict[str, Any]], turn: int, call_id: str) -> dict[str, Any] | None:
    found = [
        e
        for e in events
        if e.get("type") == "tool/call" and e.get("turn") == turn and e.get("callId") == call_id
    ]
    return found[-1] if found else None


def _raw_arguments(events: list[dict[str, Any]], turn: int, call_id: str) -> str | None:
    call = _call(events, turn, call_id)
    return None if call is None else str(call.get("arguments", ""))


def _tool_name(events: list[dict[str, Any]], turn: int, call_id: str) -> str | None:
    call = _call(events, turn, call_id)
    return None if call is None else str(call.get("name", ""))


def _last_user_text(events: list[dict[str, Any]]) -> str:
    for event in reversed(events):
        if event.get("type") == "user/message" and "source" not in event:
            return "".join(
                b.get("text", "") for b in event.get("content", []) if b.get("type") == "text"
            )
    return ""

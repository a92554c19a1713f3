"""`/approval-review`: switches kept in the log, one-shot overrides for identical bytes only."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp_plus.core.approvals import ApprovalRequest
from acp_plus.core.approvals.gate import Gate
from acp_plus.core.approvals.settings import ApprovalSettings, ReviewerSettings
from acp_plus.core.store import SessionLog, SessionStore
from acp_plus.features import approvals as approval_features
from acp_plus.features.approval_review import SessionReviewer
from acp_plus.features.commands import registry
from acp_plus.features.wiring import Increments
from acp_plus.settings.config import build


@dataclass
class FakeAgent:
    """What the reviewer reads of an agent: its log, commit, cwd (no model is asked)."""

    log: SessionLog
    cwd: Path
    providers: Any = None
    seen: list[dict[str, Any]] = field(default_factory=list)

    def commit(self, event: dict[str, Any]) -> dict[str, Any]:
        committed = self.log.append(event)
        self.seen.append(committed)
        return committed


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _reviewer(tmp_path: Path) -> tuple[SessionReviewer, FakeAgent, Clock]:
    log = SessionStore(tmp_path / "home").create(str(tmp_path))
    agent = FakeAgent(log, tmp_path)
    settings = ReviewerSettings(enabled=True)
    gate = Gate(ApprovalSettings(reviewer=settings), agent.commit, log.events, tmp_path, tmp_path)
    clock = Clock()
    return SessionReviewer(settings, agent, gate, clock), agent, clock  # type: ignore[arg-type]


def _denied_call(agent: FakeAgent, turn: int, call_id: str, raw: str) -> None:
    agent.commit(
        {"type": "tool/call", "turn": turn, "callId": call_id, "name": "deploy", "arguments": raw}
    )
    agent.commit(
        {
            "type": "approval/decided",
            "turn": turn,
            "callId": call_id,
            "outcome": "rejected",
            "source": "reviewer",
        }
    )


def _request(agent: FakeAgent, turn: int, call_id: str, raw: str) -> ApprovalRequest:
    agent.commit(
        {"type": "tool/call", "turn": turn, "callId": call_id, "name": "deploy", "arguments": raw}
    )
    return ApprovalRequest(agent.log.id, call_id, "deploy", {}, "asks")


async def test_an_override_allows_one_identical_call_within_its_lifetime(tmp_path: Path) -> None:
    reviewer, agent, clock = _reviewer(tmp_path)
    _denied_call(agent, 1, "c1", '{"env":"prod"}')
    assert reviewer.command("approve 2") == "No reviewer denial 2 in this session (1 so far)."
    assert reviewer.command("approve").startswith("Override set: the next deploy call")
    assert reviewer.command("off").startswith("Approval review is off")  # no model here
    spaced = await reviewer.decide(_request(agent, 2, "c2", '{"env": "prod"}'), 2)
    assert spaced is None  # not byte-identical: no override, and review is off
    first = await reviewer.decide(_request(agent, 2, "c3", '{"env":"prod"}'), 2)
    assert first is not None and (first.outcome, first.facts) == (
        "allowed-once",
        {"source": "override"},
    )
    again = await reviewer.decide(_request(agent, 2, "c4", '{"env":"prod"}'), 2)
    assert again is None  # used once
    reviewer.command("approve")
    clock.now += 300.0  # 5 minutes: expired
    assert await reviewer.decide(_request(agent, 3, "c5", '{"env":"prod"}'), 3) is None


def test_switches_are_read_back_from_the_log(tmp_path: Path) -> None:
    reviewer, agent, _ = _reviewer(tmp_path)
    assert reviewer.switches() == (True, None, None)
    reviewer.command("off")
    reviewer.command("model other/big")
    # A new reviewer over the same log (a restart, a session/load) reads them back.
    again = SessionReviewer(reviewer.settings, agent, reviewer.gate)  # type: ignore[arg-type]
    assert again.switches() == (False, "other", "big")
    again.command("model session")
    again.command("on")
    assert again.switches() == (True, None, None)
    assert again.command("bogus").startswith("Usage: /approval-review")


async def test_never_route_refuses_and_human_route_passes(tmp_path: Path) -> None:
    reviewer, agent, _ = _reviewer(tmp_path)
    reviewer.settings = ReviewerSettings(enabled=True, default_route="never")
    refused = await reviewer.decide(_request(agent, 1, "c1", "{}"), 1)
    assert refused is not None and refused.outcome == "rejected"
    assert refused.facts["source"] == "policy"
    reviewer.settings = ReviewerSettings(enabled=True, default_route="human")
    assert await reviewer.decide(_request(agent, 1, "c2", "{}"), 1) is None


async def test_no_model_is_a_failure_that_never_allows(tmp_path: Path) -> None:
    reviewer, agent, _ = _reviewer(tmp_path)  # no route/set in the log: nothing to ask
    assert await reviewer.decide(_request(agent, 1, "c1", "{}"), 1) is None  # human
    reviewed = [e for e in agent.seen if e["type"] == "approval/reviewed"]
    assert reviewed[0]["failure"] == "no model to review with"
    reviewer.settings = ReviewerSettings(enabled=True, on_failure="deny")
    refused = await reviewer.decide(_request(agent, 1, "c2", "{}"), 1)
    assert refused is not None and refused.outcome == "rejected"


class _SilentModel:
    """A reviewer model that never answers: its stream waits until it is cancelled."""

    def __init__(self) -> None:
        self.closed = False

    async def stream(self, request: Any) -> Any:
        try:
            await asyncio.Event().wait()
        finally:
            self.closed = True
        yield {}  # pragma: no cover - never reached


async def test_a_reviewer_past_its_timeout_is_a_failure_that_never_allows(tmp_path: Path) -> None:
    reviewer, agent, _ = _reviewer(tmp_path)
    agent.providers = silent = _SilentModel()
    agent.commit({"type": "route/set", "provider": "p", "model": "m"})
    reviewer.settings = ReviewerSettings(enabled=True, timeout=0.05)
    assert await reviewer.decide(_request(agent, 1, "c1", "{}"), 1) is None  # to the client
    reviewed = [e for e in agent.seen if e["type"] == "approval/reviewed"]
    assert reviewed[-1]["failure"] == "no answer within 0.05 s"
    assert silent.closed  # the request was given up, not left running
    reviewer.settings = ReviewerSettings(enabled=True, timeout=0.05, on_failure="deny")
    refused = await reviewer.decide(_request(agent, 1, "c2", "{}"), 1)
    assert refused is not None and refused.outcome == "rejected"


def test_the_native_profile_ignores_the_approvals_table(tmp_path: Path) -> None:
    table = {"ledger": True, "backups": {"enabled": True}, "reviewer": {"enabled": True}}
    native = Increments(build({"profile": "native", "approvals": table}, tmp_path), None)  # type: ignore[arg-type]
    assert not native.approvals and native.registry("default") == registry("default")
    plus = Increments(build({"approvals": table}, tmp_path), None)  # type: ignore[arg-type]
    names = [c.name for c in plus.registry("default")]
    assert names[-4:] == ["backups", "undo", "approval-review", "approvals"]
    bare = Increments(build({}, tmp_path), None)  # type: ignore[arg-type]
    assert not bare.approvals and bare.registry("default") == registry("default")
    assert approval_features.commands_for(ApprovalSettings()) == ()

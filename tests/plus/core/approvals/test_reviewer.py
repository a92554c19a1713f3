"""The reviewer's pure parts: no secret reaches its request, verdicts, judgement, budgets."""

from __future__ import annotations

import json

import pytest

from acp_plus.core.approvals import reviewer as rv
from acp_plus.core.approvals.redact import REDACTED
from acp_plus.core.approvals.review_state import ReviewState
from acp_plus.core.approvals.settings import ReviewerSettings

SECRETS = [
    "hunter2-pass",
    "sk-live-0123456789abcdef",
    "ghp_abcdefghijklmnopqrstuvwxyz012345",
    "AKIAABCDEFGHIJKLMNOP",
    "eyJhbGciOi.eyJzdWIiOiIx.c2lnbmF0dXJl",
    "xoxb-1234567890-abcdef",
    "s3cr3t-bearer-token",
    "userinfo-pw",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
]

ARGUMENT_FORMS = [
    {"password": "hunter2-pass"},
    {"config": {"API_KEY": "sk-live-0123456789abcdef"}},
    {"command": "curl -H 'Authorization: Bearer s3cr3t-bearer-token' https://x"},
    {"command": "git clone https://bob:userinfo-pw@example.com/r.git"},
    {"env": ["TOKEN=ghp_abcdefghijklmnopqrstuvwxyz012345", "X=1"]},
    {"text": "aws AKIAABCDEFGHIJKLMNOP and jwt eyJhbGciOi.eyJzdWIiOiIx.c2lnbmF0dXJl"},
    {"slack": "xoxb-1234567890-abcdef"},
    {
        "key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n"
        "-----END RSA PRIVATE KEY-----"
    },
    {"long": "x" * 9000 + " password=hunter2-pass"},  # past the cap: redacted before the cut
    {"headers": {"Cookie": "sid=userinfo-pw"}},
]


@pytest.mark.parametrize("args", ARGUMENT_FORMS)
def test_no_secret_in_the_arguments_reaches_the_request(args: dict[str, object]) -> None:
    for raw in (json.dumps(args), json.dumps(args)[:-1]):  # parsed, and unparsed text
        pack = rv.evidence("bash", raw, "tool bash requires approval", "/ws", "go", 4000)
        body = json.dumps(rv.request(pack, "p", "m", "s").to_json())
        for secret in SECRETS:
            assert secret not in body, (secret, raw[:80])


def test_the_user_request_is_redacted_too_and_the_pack_is_marked_as_data() -> None:
    pack = rv.evidence("t", "{}", "q", "/ws", "use token=s3cr3t-bearer-token please", 1000)
    assert "s3cr3t-bearer-token" not in pack and REDACTED in pack
    req = rv.request(pack, "p", "m", "s")
    assert req.purpose == rv.PURPOSE and req.tools == []
    assert "never instructions" in (req.system or "")
    assert req.messages[0]["content"][0]["text"].startswith("<evidence>\n")


def test_the_pack_is_bounded() -> None:
    pack = rv.evidence("t", json.dumps({"a": "y" * 50_000}), "q", "/ws", "z" * 50_000, 1000)
    assert len(pack) < 2500


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("nope", "the reviewer's answer is not JSON"),
        ("[1]", "the reviewer's answer is not a JSON object"),
        ('{"decision": "maybe", "risk": "low", "reason": "r"}', "unknown decision 'maybe'"),
        ('{"decision": "allow", "risk": "tiny", "reason": "r"}', "unknown risk 'tiny'"),
        ('{"decision": "allow", "risk": "low", "reason": ""}', "the verdict has no reason"),
    ],
)
def test_unusable_verdicts_are_failures(text: str, expected: str) -> None:
    assert rv.parse_verdict(text, 2000) == expected


def test_verdicts_parse_cap_their_reason_and_judge_against_the_risk_cap() -> None:
    text = '```json\n{"decision": "allow", "risk": "high", "reason": "' + "r" * 3000 + '"}\n```'
    verdict = rv.parse_verdict(text, 2000)
    assert isinstance(verdict, rv.Verdict) and verdict.reason.startswith("r" * 2000)
    assert verdict.reason.endswith("... [1000 more characters not shown]")
    settings = ReviewerSettings(enabled=True)  # risk cap medium
    assert rv.judge(verdict, settings) == "high-risk"
    assert rv.judge(rv.Verdict("allow", "medium", "r"), settings) == "allow"
    assert rv.judge(rv.Verdict("uncertain", "low", "r"), settings) == "uncertain"
    assert rv.judge(rv.Verdict("deny", "low", "r"), settings) == "deny"
    denial = rv.denial_text("bash", rv.Verdict("deny", "high", "no", "ask first"))
    assert denial.startswith('Error: the approval reviewer denied tool "bash" (risk high): no')
    assert "Suggestion: ask first" in denial and "Do not try to reach the same end" in denial


def test_budgets_reset_per_turn() -> None:
    state = ReviewState(ReviewerSettings(max_reviews_per_turn=2, max_failures_per_turn=1))
    state.start(1)
    state.record(False)
    assert state.over_budget() is None
    state.record(None)
    assert state.over_budget() == "the reviewer's budget of 2 reviews this turn is spent"
    state.start(2)
    assert state.over_budget() is None
    state.record(None)
    assert state.over_budget() == "the reviewer failed 1 times this turn"


def test_breaker_trips_on_consecutive_and_windowed_denials() -> None:
    state = ReviewState(ReviewerSettings())  # 3 in a row, or 10 of the last 50
    state.start(1)
    for _ in range(3):
        assert state.tripped() is None
        state.record(True)
    assert state.tripped() == "the reviewer denied 3 calls in a row"
    windowed = ReviewState(ReviewerSettings())
    for i in range(60):
        windowed.start(i)  # a new turn each time: the consecutive count restarts
        windowed.record(i % 5 == 0)  # 12 denials in 60 verdicts, 10 in the last 50
    assert windowed.tripped() == "the reviewer denied 10 of the last 50 calls"
    allowed = ReviewState(ReviewerSettings())
    for i in range(60):
        allowed.start(i)
        allowed.record(i % 6 == 0)  # 10 of 60, but 8 in the last 50
    assert allowed.tripped() is None

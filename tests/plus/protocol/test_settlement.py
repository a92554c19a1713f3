"""Stop reasons and settlement (§3.1, §3.2)."""

from __future__ import annotations

from typing import Any

import pytest

from acp_plus.protocol import settlement
from acp_plus.wire.errors import internal_error


@pytest.mark.parametrize(
    ("kind", "stop"),
    [
        ("completed", "end_turn"),
        ("max-tokens", "max_tokens"),
        ("aborted", "end_turn"),
        ("interrupted", "cancelled"),
        ("blocked", "end_turn"),
        ("disposed", "end_turn"),  # an unknown kind
        ("", "end_turn"),
    ],
)
def test_stop_reason_table(kind: str, stop: str) -> None:
    assert settlement.stop_reason(kind) == stop


def test_stop_reason_never_produces_refusal_or_max_turn_requests() -> None:
    produced = {settlement.stop_reason(k) for k in settlement._STOP_REASONS} | {
        settlement.stop_reason("x")
    }
    assert produced == {"end_turn", "max_tokens", "cancelled"}


ERROR_END = {"kind": "error", "error": {"message": "provider blew up", "code": "PROVIDER_ERROR"}}


@pytest.mark.parametrize(
    ("inputs", "outcome"),
    [
        # rule 1: cancel wins over everything, even a delivery failure or an error end
        (
            {"cancel_requested": True, "delivery_failure": "x", "turn_end": ERROR_END},
            {"stopReason": "cancelled"},
        ),
        # rule 2 before rule 3 and 5
        (
            {"cancel_requested": False, "delivery_failure": "no image", "foreign_failure": "f"},
            internal_error("assistant output delivery failed: no image"),
        ),
        (
            {"cancel_requested": False, "foreign_failure": "hook threw", "turn_end": ERROR_END},
            internal_error("turn failed: hook threw"),
        ),
        # rule 4: nothing correlated
        ({"cancel_requested": False, "turn_end": None}, {"stopReason": "cancelled"}),
        # rule 5
        (
            {"cancel_requested": False, "turn_end": ERROR_END},
            internal_error("turn failed: provider blew up"),
        ),
        # rule 6: the codec
        (
            {"cancel_requested": False, "turn_end": {"kind": "max-tokens"}},
            {"stopReason": "max_tokens"},
        ),
        (
            {"cancel_requested": False, "turn_end": {"kind": "completed"}},
            {"stopReason": "end_turn"},
        ),
    ],
)
def test_settlement_precedence(inputs: dict[str, Any], outcome: object) -> None:
    assert settlement.settle(**inputs) == outcome


def test_settle_error_message_text() -> None:
    result = settlement.settle(cancel_requested=False, turn_end=ERROR_END)
    assert not isinstance(result, dict)
    assert result.to_json() == {
        "code": -32603,
        "message": "Internal error: turn failed: provider blew up",
    }

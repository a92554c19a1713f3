"""Stop-reason codec and settlement (§3.1, §3.2), and JS-compatible JSON text."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_plus import codec
from acp_plus.errors import internal_error


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
    assert codec.stop_reason(kind) == stop


def test_stop_reason_never_produces_refusal_or_max_turn_requests() -> None:
    produced = {codec.stop_reason(k) for k in codec._STOP_REASONS} | {codec.stop_reason("x")}
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
    assert codec.settle(**inputs) == outcome


def test_settle_error_message_text() -> None:
    result = codec.settle(cancel_requested=False, turn_end=ERROR_END)
    assert not isinstance(result, dict)
    assert result.to_json() == {
        "code": -32603,
        "message": "Internal error: turn failed: provider blew up",
    }


@pytest.mark.parametrize(
    ("value", "text"),
    [
        # Expected texts are what node's JSON.stringify prints for the same value.
        (["mock", "mock"], '["mock","mock"]'),
        ({"a": 1, "b": [True, False, None]}, '{"a":1,"b":[true,false,null]}'),
        ('模型"', '"模型\\""'),
        ("tab\tnl\ncr\rbs\bff\f", '"tab\\tnl\\ncr\\rbs\\bff\\f"'),
        ("\x01\x1f\x7f", '"\\u0001\\u001f\x7f"'),
        ("\u2028/", '"\u2028/"'),
        ("\ud800", '"\\ud800"'),
        (1.0, "1"),
        (-0.0, "0"),
        (0.1, "0.1"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (123456789.125, "123456789.125"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-10, "1.5e-10"),
        (2.5e300, "2.5e+300"),
        (float("nan"), "null"),
        (float("inf"), "null"),
        (2**53 - 1, "9007199254740991"),
        (2**64, "18446744073709552000"),
        ({"b": 1, "2": 2, "1": 3, "a": 4, "01": 5}, '{"1":3,"2":2,"b":1,"a":4,"01":5}'),
    ],
)
def test_js_json(value: Any, text: str) -> None:
    assert codec.js_json(value) == text


def test_js_json_rejects_non_json() -> None:
    with pytest.raises(TypeError):
        codec.js_json({1, 2})


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("{}", {}),
        (" [1, 2.0, 1e3] ", [1, 2, 1000]),
        ("1.5", 1.5),
        # beyond 2**53 a JS number is the nearest double
        ("12345678901234567890", int(float("12345678901234567890"))),
        ('"\\ud800"', "\ud800"),
    ],
)
def test_js_parse(text: str, value: Any) -> None:
    parsed = codec.js_parse(text)
    assert parsed == value
    assert type(parsed) is type(value)


@pytest.mark.parametrize(
    ("text", "restringified"),
    [
        ('{"x": 1.0}', '{"x":1}'),
        ("[1e2, -0, 0.5e-6]", "[100,0,5e-7]"),
        ("12345678901234567890", "12345678901234567000"),
        ('{"b": 1, "0": 2}', '{"0":2,"b":1}'),
    ],
)
def test_parse_then_stringify_matches_node(text: str, restringified: str) -> None:
    assert codec.js_json(codec.js_parse(text)) == restringified


@pytest.mark.parametrize("text", ["", "NaN", "Infinity", "-Infinity", "{", "\u00a01", "1 2"])
def test_js_parse_refuses_what_json_parse_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        codec.js_parse(text)


def test_js_json_round_trips_through_python_json() -> None:
    value = {"z": [1, 2.5, "é", {"k": None}], "a": "x\u0000y"}
    assert json.loads(codec.js_json(value)) == value


@pytest.mark.parametrize(
    ("text", "trimmed"),
    [
        (" \t\n\r\v\f\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeffx\ufeff ", "x"),
        ("\x1cx\x85", "\x1cx\x85"),  # whitespace to Python, not to JavaScript
        ("\u200bx", "\u200bx"),  # zero-width space is not whitespace in either
    ],
)
def test_js_trim(text: str, trimmed: str) -> None:
    assert codec.js_trim(text) == trimmed


def test_node_utf8_replaces_lone_surrogates() -> None:
    assert codec.node_utf8("a\ud800b") == b"a\xef\xbf\xbdb"
    assert codec.node_utf8("é😀") == "é😀".encode()


def test_adjacent_surrogates_are_one_character_as_in_javascript() -> None:
    # Joining "\ud800" and "\udfff" (two text blocks) makes U+103FF in a JS string.
    joined = "\ud800" + "\udfff"
    assert codec.js_text(joined) == "\U000103ff"
    assert codec.js_string(joined) == '"\U000103ff"'
    assert codec.node_utf8(joined) == "\U000103ff".encode()
    assert codec.js_string("\udfff\ud800") == '"\\udfff\\ud800"'  # wrong order stays lone

"""JSON text and strings exactly as JavaScript (Node) writes and reads them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_plus.core import js_json


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
    assert js_json.js_json(value) == text


def test_js_json_rejects_non_json() -> None:
    with pytest.raises(TypeError):
        js_json.js_json({1, 2})


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("{}", {}),
        (" [1, 2.0, 1e3] ", [1, 2, 1000]),
        ("1.5", 1.5),
        # beyond 2**53 a JS number is the nearest double
        # (JS prints the shortest digits that round-trip, padded with zeros)
        ("12345678901234567890", 12345678901234567000),
        ("1.2345678901234568e+20", 123456789012345680000),
        ('"\\ud800"', "\ud800"),
    ],
)
def test_js_parse(text: str, value: Any) -> None:
    parsed = js_json.js_parse(text)
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
    assert js_json.js_json(js_json.js_parse(text)) == restringified


@pytest.mark.parametrize("text", ["", "NaN", "Infinity", "-Infinity", "{", "\u00a01", "1 2"])
def test_js_parse_refuses_what_json_parse_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        js_json.js_parse(text)


def test_js_json_round_trips_through_python_json() -> None:
    value = {"z": [1, 2.5, "é", {"k": None}], "a": "x\u0000y"}
    assert json.loads(js_json.js_json(value)) == value


@pytest.mark.parametrize(
    ("text", "trimmed"),
    [
        (" \t\n\r\v\f\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeffx\ufeff ", "x"),
        ("\x1cx\x85", "\x1cx\x85"),  # whitespace to Python, not to JavaScript
        ("\u200bx", "\u200bx"),  # zero-width space is not whitespace in either
    ],
)
def test_js_trim(text: str, trimmed: str) -> None:
    assert js_json.js_trim(text) == trimmed


def test_node_utf8_replaces_lone_surrogates() -> None:
    assert js_json.node_utf8("a\ud800b") == b"a\xef\xbf\xbdb"
    assert js_json.node_utf8("é😀") == "é😀".encode()


def test_adjacent_surrogates_are_one_character_as_in_javascript() -> None:
    # Joining "\ud800" and "\udfff" (two text blocks) makes U+103FF in a JS string.
    joined = "\ud800" + "\udfff"
    assert js_json.js_text(joined) == "\U000103ff"
    assert js_json.js_string(joined) == '"\U000103ff"'
    assert js_json.node_utf8(joined) == "\U000103ff".encode()
    assert js_json.js_string("\udfff\ud800") == '"\\udfff\\ud800"'  # wrong order stays lone

"""Framing: parsing never raises, shapes are classified, long lines stay bounded."""

from __future__ import annotations

import asyncio

import pytest

from parity.driver import jsonrpc
from parity.driver.jsonrpc import FRAME_LIMIT, OVERSIZE_HEAD, Line, classify, parse_line


def parsed(data: bytes) -> jsonrpc.Parsed:
    return parse_line(Line(data, len(data)))


def test_parse_keeps_any_json_value_and_unknown_fields() -> None:
    assert parsed(b'{"id":1,"result":{},"x-extra":[1]}').message == {
        "id": 1,
        "result": {},
        "x-extra": [1],
    }
    assert parsed(b"[1,2]").message == [1, 2]
    assert parsed(b'"bare"').message == "bare"
    assert parsed(b"null").error is None


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"not json", "invalid JSON"),
        (b'{"a": NaN}', "invalid JSON: non-JSON constant NaN"),
        (b"\xff\xfe{}", "invalid UTF-8"),
        (b"", "empty line"),
        (b"  \r", "empty line"),
        (b'{"a":1', "invalid JSON"),
    ],
)
def test_parse_errors_are_recorded_not_raised(data: bytes, error: str) -> None:
    result = parsed(data)
    assert result.message is None
    assert result.error is not None and result.error.startswith(error)
    # Byte-exact: bytes that are not UTF-8 are kept as lone surrogates.
    assert result.raw.encode("utf-8", "surrogateescape") == data


def test_oversize_line_is_flagged_with_its_size() -> None:
    result = parse_line(Line(b"{" * 10, FRAME_LIMIT + 5, oversize=True))
    assert result.error == f"oversize frame: {FRAME_LIMIT + 5} bytes exceed {FRAME_LIMIT}"


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "m"}, "request"),
        ({"jsonrpc": "2.0", "id": None, "method": "m"}, "request"),
        ({"jsonrpc": "2.0", "method": "m"}, "notification"),
        ({"jsonrpc": "2.0", "id": 1, "result": None}, "response"),
        ({"jsonrpc": "2.0", "id": None, "error": {"code": -32700}}, "response"),
        ({"jsonrpc": "2.0", "id": 1}, "invalid"),
        ({"method": 5, "id": 1}, "invalid"),
        ([{"jsonrpc": "2.0", "method": "m"}], "invalid"),
        ("text", "invalid"),
    ],
)
def test_classify(message: object, kind: str) -> None:
    assert classify(message) == kind


def test_encode_is_compact_and_keeps_unicode() -> None:
    assert jsonrpc.encode(jsonrpc.request(3, "m", {"t": "é"})) == (
        '{"jsonrpc":"2.0","id":3,"method":"m","params":{"t":"é"}}'
    )
    assert "params" not in jsonrpc.notification("m")


async def lines_of(data: bytes) -> list[Line]:
    reader = asyncio.StreamReader(limit=FRAME_LIMIT)
    reader.feed_data(data)
    reader.feed_eof()
    out = []
    while (line := await jsonrpc.read_line(reader)) is not None:
        out.append(line)
    return out


async def test_read_line_splits_and_keeps_a_last_line_without_newline() -> None:
    lines = await lines_of(b'{"a":1}\n\n{"b":2}')
    assert [ln.data for ln in lines] == [b'{"a":1}', b"", b'{"b":2}']
    assert not any(ln.oversize for ln in lines)


async def test_read_line_bounds_an_oversize_line_and_continues() -> None:
    big = b"x" * (FRAME_LIMIT + 1000)
    exact = b"y" * FRAME_LIMIT
    lines = await lines_of(b"first\n" + big + b"\n" + exact + b"\nlast\n" + big)
    assert [ln.size for ln in lines] == [5, len(big), FRAME_LIMIT, 4, len(big)]
    assert [ln.oversize for ln in lines] == [False, True, False, False, True]
    assert lines[1].data == big[:OVERSIZE_HEAD]
    assert lines[4].data == big[:OVERSIZE_HEAD]


def test_is_batch() -> None:
    assert jsonrpc.is_batch([{"id": 1, "result": None}])
    assert not jsonrpc.is_batch([])
    assert not jsonrpc.is_batch([1, 2])
    assert not jsonrpc.is_batch({"id": 1})

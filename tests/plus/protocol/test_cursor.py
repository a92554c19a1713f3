"""`session/list` cursor codec and paging (§1.6)."""

from __future__ import annotations

import base64
import random
from collections.abc import Callable
from typing import Any

import pytest

from acp_plus.protocol import cursor
from acp_plus.wire.errors import RpcError


def b64u(raw: bytes | str) -> str:
    """base64url without padding, the cursor's outer encoding."""
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


# Expected texts checked against node: Buffer.from(JSON.stringify(v)).toString("base64url").
@pytest.mark.parametrize(
    ("created_at", "session_id", "text"),
    [
        (1, "a", "WzEsImEiXQ"),
        (5, "模", "WzUsIuaooSJd"),
        (
            1700000000000,
            "0b6f2c1e-1111-4222-8333-944445555666",
            "WzE3MDAwMDAwMDAwMDAsIjBiNmYyYzFlLTExMTEtNDIyMi04MzMzLTk0NDQ0NTU1NTY2NiJd",
        ),
    ],
)
def test_encode_matches_node_and_round_trips(created_at: int, session_id: str, text: str) -> None:
    assert cursor.encode_cursor(created_at, session_id) == text
    assert cursor.decode_cursor(text) == (created_at, session_id)


@pytest.mark.parametrize(
    "session_id", ['quote"and\\slash', "tab\there", "\u2028", "😀", "x" * 500, "\x7f"]
)
def test_round_trip_of_awkward_ids(session_id: str) -> None:
    for created_at in (0, 1, 2**53 - 1):
        text = cursor.encode_cursor(created_at, session_id)
        assert "=" not in text
        assert cursor.decode_cursor(text) == (created_at, session_id)


CANONICAL = b64u('[1,"a"]')


@pytest.mark.parametrize(
    ("label", "text"),
    [
        ("empty", ""),
        ("not a cursor", "not a cursor!"),
        ("padding", CANONICAL + "=="),
        ("standard alphabet +", b64u('[1,"a>?"]').replace("-", "+").replace("_", "/")),
        ("standard alphabet /", "WzEsImE/Il0"),
        ("whitespace", "WzEs ImEiXQ"),
        ("length 4n+1", CANONICAL + "A"),
        ("non-zero trailing bits", CANONICAL[:-1] + "R"),
        ("float createdAt", b64u('[1.5,"a"]')),
        ("integral float createdAt", b64u('[1.0,"a"]')),
        ("exponent createdAt", b64u('[1e3,"a"]')),
        ("negative createdAt", b64u('[-1,"a"]')),
        ("negative zero", b64u('[-0,"a"]')),
        ("leading zero", b64u('[01,"a"]')),
        ("unsafe integer", b64u('[9007199254740992,"a"]')),
        ("string createdAt", b64u('["1","a"]')),
        ("boolean createdAt", b64u('[true,"a"]')),
        ("null createdAt", b64u('[null,"a"]')),
        ("three elements", b64u('[1,"a","b"]')),
        ("one element", b64u("[1]")),
        ("object", b64u('{"createdAt":1,"id":"a"}')),
        ("bare number", b64u("1")),
        ("empty id", b64u('[1,""]')),
        ("numeric id", b64u("[1,2]")),
        ("spacing after comma", b64u('[1, "a"]')),
        ("spacing inside brackets", b64u('[ 1,"a" ]')),
        ("trailing newline", b64u('[1,"a"]\n')),
        ("escaped character", b64u('[1,"\\u0061"]')),
        ("escaped slash", b64u('[1,"a\\/b"]')),
        ("invalid utf-8", b64u(b'[1,"\xff"]')),
        ("byte order mark", b64u('\ufeff[1,"a"]')),
        ("not json", b64u("[1,'a']")),
        ("NaN", b64u('[NaN,"a"]')),
    ],
)
def test_non_canonical_cursors_are_rejected(label: str, text: str) -> None:
    with pytest.raises(RpcError) as caught:
        cursor.decode_cursor(text)
    assert caught.value.to_json() == {
        "code": -32602,
        "message": "Invalid params: session/list cursor is invalid",
    }


def test_the_control_case_of_the_rejection_table_is_accepted() -> None:
    # Guards the table above: its base spelling really is canonical.
    assert cursor.decode_cursor(CANONICAL) == (1, "a")


def header(session_id: str, created_at: int, cwd: str = "/work", **extra: Any) -> dict[str, Any]:
    return {"type": "header", "id": session_id, "cwd": cwd, "createdAt": created_at, **extra}


def ids(result: dict[str, Any]) -> list[str]:
    return [entry["sessionId"] for entry in result["sessions"]]


HEADERS = [
    header("b", 100),
    header("a", 100),
    header("c", 300),
    header("B", 100),  # "B" (0x42) sorts before "a" (0x61) by bytes
    header("d", 200),
]


def test_order_is_created_at_descending_then_id_bytes_ascending() -> None:
    result = cursor.page(HEADERS, cwd_filter=None, cursor=None, page_size=100)
    assert ids(result) == ["c", "d", "B", "a", "b"]
    assert "nextCursor" not in result
    assert result["sessions"][0] == {"sessionId": "c", "cwd": "/work"}


def test_walking_pages_of_one_visits_everything_once() -> None:
    seen: list[str] = []
    next_cursor: str | None = None
    for _ in range(10):
        result = cursor.page(HEADERS, cwd_filter=None, cursor=next_cursor, page_size=1)
        seen += ids(result)
        next_cursor = result.get("nextCursor")
        if next_cursor is None:
            break
    assert seen == ["c", "d", "B", "a", "b"]


def test_next_cursor_encodes_the_last_entry_returned() -> None:
    result = cursor.page(HEADERS, cwd_filter=None, cursor=None, page_size=3)
    assert ids(result) == ["c", "d", "B"]
    assert result["nextCursor"] == cursor.encode_cursor(100, "B")


def test_exact_fit_has_no_next_cursor() -> None:
    result = cursor.page(HEADERS, cwd_filter=None, cursor=None, page_size=5)
    assert len(ids(result)) == 5
    assert "nextCursor" not in result


def test_cursor_of_a_vanished_session_still_pages_by_key() -> None:
    gone = cursor.encode_cursor(100, "Azz")  # no such session; sorts just before "B"
    result = cursor.page(HEADERS, cwd_filter=None, cursor=gone, page_size=100)
    assert ids(result) == ["B", "a", "b"]
    older = cursor.encode_cursor(150, "zzz")
    assert ids(cursor.page(HEADERS, cwd_filter=None, cursor=older, page_size=100)) == [
        "B",
        "a",
        "b",
    ]


@pytest.mark.parametrize(
    ("excluded", "why"),
    [
        (header("s", 1, origin="subagent"), "subagent"),
        (header("f", 1, parentSession="p"), "fork"),
        (header("r", 1, cwd="relative/dir"), "relative cwd"),
        ({"type": "header", "id": "m", "createdAt": 1}, "missing cwd"),
        (header("", 1), "empty id"),
        (header("n", -1), "negative createdAt"),
        (header("t", True), "boolean createdAt"),
    ],
)
def test_unlistable_headers_are_skipped(excluded: dict[str, Any], why: str) -> None:
    result = cursor.page([excluded, header("ok", 1)], cwd_filter=None, cursor=None, page_size=10)
    assert ids(result) == ["ok"], why


def test_live_sessions_are_excluded() -> None:
    result = cursor.page(
        HEADERS, cwd_filter=None, cursor=None, page_size=10, exclude_ids={"c", "a"}
    )
    assert ids(result) == ["d", "B", "b"]


def fake_realpath(table: dict[str, str]) -> Callable[[str], str | None]:
    return table.get


def test_cwd_filter_compares_real_paths() -> None:
    headers = [header("x", 3, cwd="/link"), header("y", 2, cwd="/real"), header("z", 1, "/other")]
    realpath = fake_realpath({"/link": "/real", "/real": "/real", "/other": "/other"})
    result = cursor.page(headers, cwd_filter="/real", cursor=None, page_size=10, realpath=realpath)
    assert ids(result) == ["x", "y"]
    # the listed cwd is the stored one, not the resolved one
    assert result["sessions"][0]["cwd"] == "/link"


def test_cwd_filter_falls_back_to_lexical_when_either_side_does_not_resolve() -> None:
    headers = [header("x", 3, cwd="/gone/a/../b/"), header("y", 2, cwd="/link")]
    realpath = fake_realpath({"/link": "/gone/b"})  # "/gone/b" itself does not resolve
    result = cursor.page(
        headers, cwd_filter="/gone/b", cursor=None, page_size=10, realpath=realpath
    )
    assert ids(result) == ["x"]


@pytest.mark.parametrize(
    ("path", "resolved"),
    [("/a/./b/../c/", "/a/c"), ("//a", "/a"), ("///a//b", "/a/b"), ("/", "/"), ("/..", "/")],
)
def test_lexical_resolve_matches_node_path_resolve(path: str, resolved: str) -> None:
    assert cursor.lexical_resolve(path) == resolved


def test_invalid_cursor_is_reported_even_with_no_sessions() -> None:
    with pytest.raises(RpcError, match="session/list cursor is invalid"):
        cursor.page([], cwd_filter=None, cursor="not a cursor!", page_size=1)


def random_id(rng: random.Random) -> str:
    alphabet = 'abcXYZ019-_ "\\/\t\u00e9\u6a21\U0001f600\u2028\x00'
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))


def test_seeded_round_trips() -> None:
    rng = random.Random(1)
    for _ in range(500):
        key = (rng.choice([0, rng.randint(0, 2**53 - 1), rng.randint(0, 10**13)]), random_id(rng))
        assert cursor.decode_cursor(cursor.encode_cursor(*key)) == key


def test_every_accepted_mutation_is_itself_canonical() -> None:
    """Flip single characters of valid cursors: whatever decodes must re-encode to itself,
    so no two texts ever name one key."""
    rng = random.Random(2)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    accepted = 0
    for _ in range(300):
        text = cursor.encode_cursor(rng.randint(0, 10**13), random_id(rng))
        for _ in range(10):
            at = rng.randrange(len(text))
            mutated = text[:at] + rng.choice(alphabet) + text[at + 1 :]
            try:
                key = cursor.decode_cursor(mutated)
            except RpcError:
                continue
            accepted += 1
            assert cursor.encode_cursor(*key) == mutated
    assert accepted > 0  # the property was exercised, not vacuously true


def test_deep_nesting_is_a_refusal_not_a_crash() -> None:
    with pytest.raises(RpcError, match="cursor is invalid"):
        cursor.decode_cursor(b64u("[" * 100_000))

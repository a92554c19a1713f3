"""`session/list` keyset cursor and paging (§1.6).

A cursor is base64url (no padding) of the compact JSON `[createdAt, sessionId]` of the
last entry returned. Decoding accepts only the canonical spelling, so every cursor has
exactly one text. Paging filters by the cursor's key, not a position, so a cursor still
works after its session disappears.
"""

from __future__ import annotations

import base64
import posixpath
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from acp_plus.core.js_json import js_json, js_parse, node_utf8
from acp_plus.wire.errors import RpcError, invalid_params

_CURSOR_CHARS = re.compile(r"[A-Za-z0-9_-]+")
_MAX_SAFE_INTEGER = 2**53 - 1
INVALID_CURSOR = "session/list cursor is invalid"

Key = tuple[int, str]
"""A list entry's sort key: (createdAt in ms, session id)."""


def invalid_cursor() -> RpcError:
    """-32602 `Invalid params: session/list cursor is invalid`."""
    return invalid_params(INVALID_CURSOR)


def encode_cursor(created_at: int, session_id: str) -> str:
    """The cursor text for the entry `(created_at, session_id)`."""
    raw = node_utf8(js_json([created_at, session_id]))
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> Key:
    """The key a cursor encodes; raises the §1.6 RpcError for anything non-canonical."""
    if not _CURSOR_CHARS.fullmatch(cursor):
        raise invalid_cursor()
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value = js_parse(raw.decode("utf-8"))
    # binascii.Error and UnicodeDecodeError are ValueErrors; absurd nesting must still be
    # a refusal, not an internal error.
    except (ValueError, RecursionError) as exc:
        raise invalid_cursor() from exc
    if not (isinstance(value, list) and len(value) == 2):
        raise invalid_cursor()
    created_at, session_id = value
    # bool is an int in Python but a distinct type in JSON.
    if isinstance(created_at, bool) or not isinstance(created_at, int):
        raise invalid_cursor()
    if not 0 <= created_at <= _MAX_SAFE_INTEGER:
        raise invalid_cursor()
    if not isinstance(session_id, str) or session_id == "":
        raise invalid_cursor()
    # Any other spelling of the same key (spaces, escapes, 1.0, padding bits) is refused.
    if encode_cursor(created_at, session_id) != cursor:
        raise invalid_cursor()
    return created_at, session_id


def lexical_resolve(path: str) -> str:
    """Node's `path.resolve` of an absolute POSIX path: normalized, no trailing slash."""
    normalized = posixpath.normpath(path)
    # POSIX keeps a leading "//"; Node collapses it to "/".
    return "/" + normalized.lstrip("/")


def same_directory(a: str, b: str, realpath: Callable[[str], str | None]) -> bool:
    """Whether two absolute paths name one directory: by `realpath` when both resolve
    (None means "cannot resolve"), otherwise lexically."""
    real_a, real_b = realpath(a), realpath(b)
    if real_a is not None and real_b is not None:
        return real_a == real_b
    return lexical_resolve(a) == lexical_resolve(b)


def _header_key(header: Mapping[str, Any]) -> Key | None:
    """The sort key of a listable header, or None if the header cannot be listed."""
    session_id = header.get("id")
    created_at = header.get("createdAt")
    cwd = header.get("cwd")
    if not isinstance(session_id, str) or session_id == "":
        return None
    if isinstance(created_at, bool) or not isinstance(created_at, int) or created_at < 0:
        return None
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        return None
    if header.get("origin") == "subagent" or header.get("parentSession") is not None:
        return None
    return created_at, session_id


def _order(key: Key) -> tuple[int, bytes]:
    # createdAt descending, then id ascending by raw UTF-8 bytes.
    return -key[0], node_utf8(key[1])


def _after(key: Key, cursor: Key) -> bool:
    return _order(key) > _order(cursor)


def page(
    headers: Iterable[Mapping[str, Any]],
    *,
    cwd_filter: str | None,
    cursor: str | None,
    page_size: int,
    exclude_ids: Collection[str] = (),
    realpath: Callable[[str], str | None] = lambda _path: None,
) -> dict[str, Any]:
    """The `session/list` result for persisted `headers` (§1.6).

    `exclude_ids` are sessions live in this process (never listed); `realpath` resolves
    a path on disk or returns None, so the filesystem stays with the caller. Raises the
    cursor RpcError for an invalid cursor. `cwd_filter` must already be checked absolute.
    """
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    after = decode_cursor(cursor) if cursor is not None else None
    entries: list[tuple[Key, str]] = []
    for header in headers:
        key = _header_key(header)
        if key is None or key[1] in exclude_ids:
            continue
        cwd = str(header["cwd"])
        if cwd_filter is not None and not same_directory(cwd_filter, cwd, realpath):
            continue
        if after is not None and not _after(key, after):
            continue
        entries.append((key, cwd))
    entries.sort(key=lambda entry: _order(entry[0]))
    chosen = entries[:page_size]
    result: dict[str, Any] = {
        "sessions": [{"sessionId": key[1], "cwd": cwd} for key, cwd in chosen]
    }
    if len(entries) > page_size:
        last = chosen[-1][0]
        result["nextCursor"] = encode_cursor(*last)
    return result

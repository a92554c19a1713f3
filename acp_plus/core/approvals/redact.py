"""Redaction of the reviewer's evidence (pure): secrets by key name and inside free text.

Redaction always runs before truncation, so a cut can never leave half a secret that
the patterns would no longer recognise. What is redacted becomes `[REDACTED]`.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "[REDACTED]"

SECRET_KEY = re.compile(
    r"(pass(word|wd|phrase)?|secret|token|api[_-]?key|apikey|auth(orization)?|credential|"
    r"private[_-]?key|cookie|session[_-]?(id|key)|access[_-]?key|signature|bearer)",
    re.IGNORECASE,
)
"""A key whose name says its value is a secret (any value under it is redacted)."""

# Bounded repetitions only: an unbounded `[\w.-]*` around the key words backtracks
# quadratically over a long run of word characters (a 50 kB argument took minutes).
_KEY_VALUE = re.compile(
    r"""(?ix)
    (["']?[\w.-]{0,40}(?:pass(?:word|wd|phrase)?|secret|token|api[_-]?key|apikey|auth(?:orization)?|
    credential|private[_-]?key|cookie|access[_-]?key|signature)[\w.-]{0,40}["']?
    \s*[:=]\s*)
    ("[^"]*"|'[^']*'|[^\s,;&"'}]+)"""
)
_SCHEME = re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{6,}")
_USERINFO = re.compile(r"(://[^/\s:@]+:)[^@\s/]+@")
_SHAPES = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)", re.S),
    re.compile(r"\b(sk|pk|rk)[-_][A-Za-z0-9_-]{8,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{16,}"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{8,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"),
)
"""Secrets recognisable by their shape alone (keys, tokens, JWTs)."""


def redact_text(text: str) -> str:
    """`text` with every secret the patterns know replaced (the key names kept). The
    auth scheme goes first, so `Authorization: Bearer x` loses `x`, not just `Bearer`."""
    text = _SCHEME.sub(lambda m: m.group(1) + " " + REDACTED, text)
    for shape in _SHAPES:
        text = shape.sub(REDACTED, text)
    text = _USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", text)
    return _KEY_VALUE.sub(
        lambda m: m.group(0) if m.group(2) == REDACTED else m.group(1) + REDACTED, text
    )


def redact(value: Any) -> Any:
    """A copy of JSON-like `value`: values under secret-named keys redacted, and every
    string run through `redact_text`."""
    if isinstance(value, dict):
        return {
            k: REDACTED if SECRET_KEY.search(str(k)) and value[k] not in (None, "") else redact(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


def truncate(text: str, cap: int) -> str:
    """`text` cut to `cap` characters, saying how much was left out."""
    if len(text) <= cap:
        return text
    return text[:cap] + f"... [{len(text) - cap} more characters not shown]"

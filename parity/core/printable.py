"""An agent's text made safe to show: nothing in it acts on a terminal or breaks a file.

An agent under test chooses every byte it sends, and some of them are commands to the
terminal that shows them (clear the screen, switch to the alternate screen, set the
window title, put text on the clipboard with OSC 52) or cannot be encoded at all (a lone
UTF-16 surrogate, legal in JSON as `"\\ud83d"`; an invalid UTF-8 byte the driver keeps
as one). `printable` escapes them, so a failure text, a summary line or a report shows
what was sent instead of doing it. The transcript and the snapshots keep the exact
values; only what is shown is escaped.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(
    "["
    "\x00-\x08\x0b-\x1f\x7f"  # C0 controls but tab and newline, and DEL: ESC, BEL, CR, ...
    "\x80-\x9f"  # C1 controls: a terminal may read \x9b as CSI, \x9d as OSC
    "\ud800-\udfff"  # lone surrogates: not encodable in UTF-8
    "\u202a-\u202e\u2066-\u2069"  # bidirectional overrides: text shown out of order
    "]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every control character but tab and newline, every lone surrogate and
    every bidirectional override written as an escape (`\\x1b`, `\\ud83d`, `\\u202e`)."""
    return _UNSAFE.sub(_escape, text)

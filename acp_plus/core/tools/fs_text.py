"""What native's file tools make of text: `read`'s numbered window and its envelope,
`write`'s and `edit`'s confirmations, `edit`'s literal replacement and line endings, and
the argument checks the schema cannot express. Pure; `fs_family.py` does the I/O.

Native is a Node program, so a line's length is counted in UTF-16 units (an astral
character is two) and a window's size in UTF-8 bytes of what is shown; both are
reproduced here (docs/acp-plus.md, "Built-in tools").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from acp_plus.core.js_json import js_number, js_trim

READ_LIMIT = 2000
"""Default and largest `limit` of one `read` (native's `readLimit`)."""
READ_MAX_LINE_LENGTH = 2000
"""UTF-16 units of one line shown before it is cut (native's `readMaxLineLength`)."""
READ_MAX_BYTES = 50 * 1024
"""UTF-8 bytes of the lines one `read` shows (native's `readMaxBytes`)."""
CRLF_SAMPLE = 4096
"""UTF-16 units of an edited file's start that decide its line endings."""


class FsError(Exception):
    """A refusal of the file tools: native's message and its error code."""

    def __init__(self, message: str, code: str = "FS_ERROR") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def _u16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def u16_prefix(text: str, units: int) -> str:
    """The first `units` UTF-16 units of `text` (`text.slice(0, units)` in JavaScript): a
    surrogate pair cut in two leaves its lone high half, as there."""
    if len(text) <= units // 2:
        return text
    data = text.encode("utf-16-le", "surrogatepass")
    if len(data) <= 2 * units:
        return text
    return data[: 2 * units].decode("utf-16-le", "surrogatepass")


def _utf8_len(text: str) -> int:
    # Node counts a lone surrogate as the three bytes of U+FFFD; surrogatepass agrees.
    return len(text.encode("utf-8", "surrogatepass"))


def positive_integer(value: object, name: str) -> int:
    """A window argument as native accepts it: a finite whole number of at least 1."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FsError(f"{name} must be a positive integer")
    if isinstance(value, float) and not value.is_integer():
        raise FsError(f"{name} must be a positive integer")
    if value < 1:
        raise FsError(f"{name} must be a positive integer")
    return int(value)


def check_path(file_path: str) -> None:
    """Native refuses a blank `file_path` before it resolves anything."""
    if not js_trim(file_path):
        raise FsError("file_path must be a non-empty string", "FS_NOT_FOUND")


def read_window_args(offset: object, limit: object) -> tuple[int, int]:
    """`offset` (default 1) and `limit` (default and cap `READ_LIMIT`), native's checks."""
    first = 1 if offset is None else positive_integer(offset, "offset")
    count = READ_LIMIT if limit is None else positive_integer(limit, "limit")
    if count > READ_LIMIT:
        raise FsError(f"limit must be less than or equal to {READ_LIMIT}")
    return first, count


@dataclass(frozen=True)
class Window:
    """The lines one `read` shows (number, text) and the file's line count."""

    lines: tuple[tuple[int, str], ...]
    total: int


def _cut(line: str) -> str:
    if _u16_len(line) > READ_MAX_LINE_LENGTH:
        head = u16_prefix(line, READ_MAX_LINE_LENGTH)
        return f"{head}... (line truncated to {READ_MAX_LINE_LENGTH} chars)"
    return line


def build_window(chunks: Iterable[str], offset: int, limit: int, display: str) -> Window:
    """Native's window over a file's decoded text, fed in chunks of any size.

    Each line is held to one unit past the cap before its `\\r` is dropped (so a `\\r`
    right after the cap ends the line there, as on native), then cut to the cap; lines
    stop at `limit` or when the next one would pass `READ_MAX_BYTES`, and the scan goes
    on counting to the end. An offset past the end is refused, except 1 in an empty file.
    """
    lines: list[tuple[int, str]] = []
    total = 0
    size = 0
    capped = False
    cap = READ_MAX_LINE_LENGTH + 1
    buffer: list[str] = []
    held = 0

    def flush() -> None:
        nonlocal total, size, capped, held
        raw = u16_prefix("".join(buffer), cap)
        buffer.clear()
        held = 0
        total += 1
        if capped or total < offset or len(lines) >= limit:
            return
        text = _cut(raw.removesuffix("\r"))
        grow = _utf8_len(text) + (1 if lines else 0)
        if size + grow > READ_MAX_BYTES:
            capped = True
            return
        size += grow
        lines.append((total, text))

    def hold(segment: str) -> None:
        nonlocal held
        if held <= cap:
            buffer.append(segment)
            held += len(segment)

    for chunk in chunks:
        pieces = chunk.split("\n")
        for piece in pieces[:-1]:
            hold(piece)
            flush()
        hold(pieces[-1])
    if any(buffer):
        flush()
    if not capped and offset > total and not (total == 0 and offset == 1):
        raise FsError(
            f'offset {js_number(float(offset))} is out of range for "{display}" ({total} lines)',
            "FS_NOT_FOUND",
        )
    return Window(tuple(lines), total)


def format_read(path: str, offset: int, limit: int, window: Window) -> str:
    """Native's read envelope: numbered lines, then where to continue or the end."""
    end = window.lines[-1][0] if window.lines else max(0, offset - 1)
    if len(window.lines) < limit and end < window.total:
        footer = f"(Output capped. Showing lines {offset}-{end}. Use offset={end + 1} to continue.)"
    elif end < window.total:
        footer = (
            f"(Showing lines {offset}-{end} of {window.total}. Use offset={end + 1} to continue.)"
        )
    else:
        footer = f"(End of file - total {window.total} lines)"
    if window.lines:
        numbered = "\n".join(f"{number}: {text}" for number, text in window.lines)
        body = f"{numbered}\n\n{footer}"
    else:
        body = footer
    return f"<path>{path}</path>\n<type>file</type>\n<content>\n{body}\n</content>"


def format_write(path: str, created: bool) -> str:
    """Native's write confirmation (the content is not echoed)."""
    verb = "Created" if created else "Updated"
    return f"<path>{path}</path>\n<type>file</type>\n<content>\n{verb} file\n</content>"


def format_edit(path: str, replace_all: bool) -> str:
    """Native's edit confirmation."""
    if replace_all:
        return f"The file {path} has been updated. All occurrences were successfully replaced."
    return f"The file {path} has been updated successfully."


def edit_args(old: str, new: str) -> None:
    """Native's checks of an edit's strings before it touches the file."""
    if not old:
        raise FsError("old_string must be a non-empty string")
    if old == new:
        raise FsError("old_string and new_string must differ")


def normalize_line_endings(text: str) -> str:
    """CRLF collapsed to LF, the form every edit matches against (a lone CR stays)."""
    return text.replace("\r\n", "\n")


def is_crlf(raw: str) -> bool:
    """Whether a file is written back with CRLF: more CRLF than bare LF endings in its
    first `CRLF_SAMPLE` units."""
    sample = u16_prefix(raw, CRLF_SAMPLE)
    crlf = sample.count("\r\n")
    return crlf > sample.count("\n") - crlf


def apply_edit(raw: str, old: str, new: str, replace_all: bool, display: str) -> tuple[str, str]:
    """`raw`'s text after the literal replacement, in the file's own line endings, and
    the LF-normalized text before it; native's refusals for no match and several."""
    content = normalize_line_endings(raw)
    old_norm, new_norm = normalize_line_endings(old), normalize_line_endings(new)
    if not old_norm:
        raise FsError("old_string must be a non-empty string", "FS_EDIT_NOT_FOUND")
    count = content.count(old_norm)
    if count == 0:
        raise FsError(f'old_string was not found in "{display}"', "FS_EDIT_NOT_FOUND")
    if not replace_all and count > 1:
        raise FsError(
            f'old_string matched {count} times in "{display}"; provide a more specific '
            "old_string or set replace_all to true",
            "FS_AMBIGUOUS_EDIT",
        )
    edited = new_norm.join(content.split(old_norm))
    if is_crlf(raw):
        edited = "\r\n".join(normalize_line_endings(edited).split("\n"))
    return edited, content


_PARENT = re.compile(r"(?:^|/)\.\.(?:/|$)")


def has_parent_segment(path: str) -> bool:
    """Whether `path` walks up with a `..` segment."""
    return _PARENT.search(path) is not None


__all__ = [
    "CRLF_SAMPLE",
    "READ_LIMIT",
    "READ_MAX_BYTES",
    "READ_MAX_LINE_LENGTH",
    "FsError",
    "Window",
    "apply_edit",
    "build_window",
    "check_path",
    "edit_args",
    "format_edit",
    "format_read",
    "format_write",
    "has_parent_segment",
    "is_crlf",
    "normalize_line_endings",
    "positive_integer",
    "read_window_args",
    "u16_prefix",
]

"""Native's read window, envelopes and literal edit as pure functions, and the argument
checks the fs tools run before anything else."""

from __future__ import annotations

import pytest

from acp_plus.core.tools.arg_schema import invalid_arguments
from acp_plus.core.tools.fs_family import EditTool, ReadTool, WriteTool
from acp_plus.core.tools.fs_text import (
    READ_MAX_BYTES,
    FsError,
    apply_edit,
    build_window,
    format_read,
    read_window_args,
    u16_prefix,
)


def _read(text: str, offset: int = 1, limit: int = 2000, chunk: int = 0) -> str:
    pieces = [text[i : i + chunk] for i in range(0, len(text), chunk)] if chunk else [text]
    window = build_window(pieces, offset, limit, "/w/f")
    return format_read("/w/f", offset, limit, window)


def test_a_window_says_where_to_continue_and_where_the_file_ends() -> None:
    text = "one\ntwo\nthree\n"
    assert _read(text, 2, 1) == (
        "<path>/w/f</path>\n<type>file</type>\n<content>\n2: two\n\n"
        "(Showing lines 2-2 of 3. Use offset=3 to continue.)\n</content>"
    )
    assert _read(text, 3).endswith("3: three\n\n(End of file - total 3 lines)\n</content>")
    assert _read("").endswith("<content>\n(End of file - total 0 lines)\n</content>")
    # A last line without a newline counts; chunk boundaries mean nothing.
    assert _read("a\nb", chunk=1) == _read("a\nb")
    assert "2: b" in _read("a\nb")
    with pytest.raises(FsError, match=r'offset 4 is out of range for "/w/f" \(3 lines\)'):
        _read(text, 4)


def test_long_lines_are_cut_in_utf16_units_after_the_cr_is_dropped() -> None:
    suffix = "... (line truncated to 2000 chars)"
    assert f"1: {'x' * 2000}{suffix}" in _read("x" * 2001)
    assert f"1: {'x' * 2000}\n" in _read("x" * 2000 + "\r\n")
    # A CR right after the cap ends what native holds of the line: no cut, no suffix.
    assert f"1: {'x' * 2000}\n" in _read("x" * 2000 + "\rtail")
    # An astral character is two units, and a cut through one leaves its high half.
    smile = "\U0001f600"
    assert f"1: {smile * 1000}{suffix}" in _read(smile * 1001)
    assert u16_prefix("a\U0001f600", 2) == "a\ud83d"


def test_the_byte_cap_stops_the_window_and_says_so() -> None:
    line = "y" * 1000
    text = "\n".join([line] * 60) + "\n"
    shown = _read(text)
    kept = READ_MAX_BYTES // 1001
    assert f"{kept}: {line}" in shown and f"{kept + 1}: " not in shown
    assert shown.endswith(
        f"(Output capped. Showing lines 1-{kept}. Use offset={kept + 1} to continue.)\n</content>"
    )


def test_window_arguments_are_native_positive_integers() -> None:
    assert read_window_args(None, None) == (1, 2000)
    assert read_window_args(2.0, 5) == (2, 5)
    for offset, limit, message in [
        (0, None, "offset must be a positive integer"),
        (1.5, None, "offset must be a positive integer"),
        (None, 0, "limit must be a positive integer"),
        (None, 2001, "limit must be less than or equal to 2000"),
    ]:
        with pytest.raises(FsError, match=message):
            read_window_args(offset, limit)


def test_literal_edit_keeps_the_files_line_endings() -> None:
    edited, before = apply_edit("one\r\ntwo\r\n", "one\ntwo", "1\n2", False, "/f")
    assert (edited, before) == ("1\r\n2\r\n", "one\ntwo\n")
    # A mixed file takes the ending most of its lines have.
    assert apply_edit("a\r\nb\r\nc\n", "a", "A", False, "/f")[0] == "A\r\nb\r\nc\r\n"
    assert apply_edit("x x", "x", "z", True, "/f")[0] == "z z"
    with pytest.raises(FsError, match='old_string matched 2 times in "/f"; provide a more'):
        apply_edit("x x", "x", "z", False, "/f")
    with pytest.raises(FsError, match='old_string was not found in "/f"'):
        apply_edit("x", "y", "z", False, "/f")


def test_arguments_are_checked_against_the_tools_own_schema() -> None:
    assert invalid_arguments(ReadTool.parameters, {"file_path": "a", "offset": 2}) is None
    assert invalid_arguments(ReadTool.parameters, {"offset": "2", "limit": True}) == (
        'invalid arguments: missing required property "file_path"; "offset" must be a '
        'number; "limit" must be a number'
    )
    assert invalid_arguments(
        WriteTool.parameters, {"file_path": "a", "content": "", "sandbox_permissions": "x"}
    ) == (
        'invalid arguments: "sandbox_permissions" must be one of '
        '["workspace-write","danger-full-access"]'
    )
    assert (
        invalid_arguments(EditTool.parameters, [])
        == 'invalid arguments: "arguments" must be an object'
    )

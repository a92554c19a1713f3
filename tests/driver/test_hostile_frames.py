"""What a hostile agent sends is recorded exactly and shown safely, and a frame the
harness cannot follow is a run problem on that frame, never a crash (issue 33)."""

from __future__ import annotations

import json
import re

from parity.checks.conformance import conformance_findings
from parity.core.depth import CUT, MAX_DEPTH
from parity.core.printable import printable
from parity.report.text import failure_text
from parity.view.dump import dump_view, load_view
from parity.view.normalize import view
from tests.support.driver import BASIC, frame_of, run, st

PROMPT = [*BASIC, st("prompt", session="s1", text="go")]
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
"""What must never reach a terminal: controls (ESC, BEL, CSI) and lone surrogates."""


async def test_surrogates_invalid_utf8_and_escapes_are_kept_exactly_and_shown_escaped() -> None:
    t = await run(PROMPT, "hostile_text")
    assert t.steps[2].response["result"] == {"stopReason": "end_turn"}
    lone = frame_of(t, lambda f: "surrogate" in f.raw)
    assert lone.message["params"]["update"]["content"]["text"] == "lone \ud83d surrogate"
    debug = frame_of(t, lambda f: f.raw.startswith("DEBUG"))
    # Byte-exact: the raw line gives back the agent's bytes, invalid UTF-8 included.
    assert debug.raw.encode("utf-8", "surrogateescape").endswith(b" \xff\xfe\xc3 bytes")
    assert "\x1b]52;c;" in t.processes[0].stderr_tail
    # The snapshot's YAML holds the exact values (escaped) and reads back equal.
    data = view(t, "exact", [])
    text = dump_view(data)
    assert "\\uD83D" in text and "\\e]52;c;" in text and not UNSAFE.search(text)
    assert load_view(text) == data
    # The failure text (transcript and stderr tails) and findings show escapes only.
    shown = failure_text("headline", "diff", {"hostile": t})
    assert "\\x1b]0;pwned\\x07" in shown and "\\udcff" in shown
    assert not UNSAFE.search(shown)
    assert not any(UNSAFE.search(f) for f in conformance_findings(t))


def test_printable_escapes_controls_surrogates_and_bidi_overrides_only() -> None:
    assert printable("a\tb\nc") == "a\tb\nc"
    assert printable("\x1b[2J\r\x07\x9b\ud83d\u202e") == "\\x1b[2J\\x0d\\x07\\x9b\\ud83d\\u202e"
    assert printable("héllo ✓ 😀") == "héllo ✓ 😀"


async def test_a_frame_nested_hundreds_of_levels_is_a_problem_on_that_frame() -> None:
    t = await run(PROMPT, "deep_nesting")
    # The answer nests as deep as the update, and still ends the prompt.
    assert t.steps[2].problem is None
    assert t.steps[2].response["result"]["stopReason"] == "end_turn"
    deep = [f.seq for f in t.frames if f.raw.count("[") > MAX_DEPTH]
    assert len(deep) == 2 and all(len(t.frames[s].raw) > 1200 for s in deep)
    assert [p for p in t.problems if "too deeply nested" in p] == [
        f"frame {seq}: too deeply nested frame on stdout: JSON nested 603 levels deep, cut at"
        f" {MAX_DEPTH} (the line is kept whole)"
        for seq in deep
    ]
    # Everything after the run follows the cut value, within Python's stack.
    data = view(t, "exact", [])
    assert CUT in json.dumps(data)
    assert load_view(dump_view(data)) == data
    conformance_findings(t)
    view(t, "semantic", [])

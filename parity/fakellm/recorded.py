"""What a captured entry remembers of the request it answered, and staleness (pure).

A captured scenario (docs/capture.md) stores, with each `llm` entry, the request that
entry answered, as a projection of the canonical request (`dialects.canonical_request`):
the messages and the names of the offered tools, with machine identity already scrubbed
(`identity.Identity`) and what differs harmlessly from run to run (dates, clock times,
UUIDs) made tokens. The system prompt, the model name and the sampling options are left
out: they belong to the agent's configuration, not to the conversation the recording
answers. On replay against the captured target, a request whose projection differs from
the recorded one means the recording is stale: the agent now says something the model
never answered.

Stored entry by entry the messages would grow quadratically (each request repeats the
conversation so far), so `encode` keeps, per entry, how many messages it shares with
the previous entry's request (`prefix`) and only the rest; `tools` is left out where it
equals the previous entry's. `decode` restores the full projections.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from parity.fakellm.identity import map_strings

Projection = dict[str, Any]
"""`{"messages": [...], "tools": [names]}`."""

_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_CLOCK = re.compile(r"(?<![\d:])\d{2}:\d{2}:\d{2}(?:\.\d+)?(?![\d:])")
"""A clock time on its own (JavaScript's `Date.toString()`: `Wed Dec 02 2026 10:11:12`)."""
_ISO_DATE = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)")
_DURATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|milliseconds?|s|secs?|seconds?)(?![\w])")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DAYS = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"
_LONG_DATE = re.compile(
    # "Wednesday, December 2, 2026", "December 2, 2026" and JS's "Wed Dec 02 2026".
    rf"(?:(?:{_DAYS}), )?(?:{_MONTHS}) \d{{1,2}}, \d{{4}}"
    r"|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
    r" \d{2} \d{4}"
)


def harmless(text: str) -> str:
    """`text` with clock times, dates, durations and UUIDs made tokens: the parts of a
    request that change between two runs of the same conversation (an agent's runtime
    context names today's date; codex-acp tells the model a tool's wall time; session
    ids are fresh each run)."""
    text = _ISO_TIME.sub("<time>", text)
    text = _CLOCK.sub("<time>", text)
    text = _DURATION.sub("<duration>", text)
    text = _ISO_DATE.sub("<date>", text)
    text = _LONG_DATE.sub("<date>", text)
    return _UUID.sub("<uuid>", text)


def projection(
    canonical: Mapping[str, Any] | None, scrub: Callable[[str], str]
) -> Projection | None:
    """The staleness projection of a model call's canonical request (None for any other
    request: `dialects.canonical_request` gave none)."""
    if canonical is None:
        return None
    messages = map_strings(canonical.get("messages", []), lambda s: harmless(scrub(s)))
    tools = [str(t.get("name")) for t in canonical.get("tools", []) if isinstance(t, Mapping)]
    return {"messages": messages, "tools": tools}


def encode(projections: Sequence[Projection | None]) -> list[dict[str, Any] | None]:
    """Full projections, in entry order -> the compact form stored in each entry."""
    out: list[dict[str, Any] | None] = []
    previous: Projection = {"messages": [], "tools": None}
    for item in projections:
        if item is None:
            out.append(None)
            continue
        shared = 0
        for old, new in zip(previous["messages"], item["messages"], strict=False):
            if old != new:
                break
            shared += 1
        stored: dict[str, Any] = {"prefix": shared} if shared else {}
        stored["messages"] = item["messages"][shared:]
        if item["tools"] != previous["tools"]:
            stored["tools"] = item["tools"]
        out.append(stored)
        previous = item
    return out


def decode(stored: Sequence[Mapping[str, Any] | None]) -> list[Projection | None]:
    """The inverse of `encode`. A `prefix` longer than the previous request is cut to it
    (a hand-edited file must not crash the replay; the mismatch then shows in the diff)."""
    out: list[Projection | None] = []
    previous: Projection = {"messages": [], "tools": []}
    for item in stored:
        if item is None:
            out.append(None)
            continue
        prefix = int(item.get("prefix", 0))
        messages = [*previous["messages"][:prefix], *item.get("messages", [])]
        tools = list(item["tools"]) if "tools" in item else list(previous["tools"])
        full: Projection = {"messages": messages, "tools": tools}
        out.append(full)
        previous = full
    return out


def stale_diff(recorded: Projection, new: Projection, *, context: int = 3) -> str | None:
    """A unified diff of the recorded and the new request's projection, None when equal."""
    if recorded == new:
        return None
    lines = difflib.unified_diff(
        _lines(recorded), _lines(new), "recorded request", "new request", n=context, lineterm=""
    )
    return "\n".join(lines)


def _lines(projection: Projection) -> list[str]:
    return json.dumps(projection, indent=1, ensure_ascii=False, sort_keys=True).splitlines()

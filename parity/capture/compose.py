"""A recording run's model calls -> the scenario file `parity capture` writes (pure).

The input is plain data: the client side the capture ran (the `--steps` file's mapping,
or the one `--prompt` stands for), the fake LLM's `Captured` calls in arrival order, and
how the capture was made. The output is the scenario's YAML text: the client side as
given, `captured` saying how it was recorded, and one `llm` entry per answered model
call, each with the `request` it answered (`parity.fakellm.recorded.encode`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from parity.fakellm.recorded import encode
from parity.fakellm.toolnames import SEPARATORS
from parity.view.dump import dump_yaml

FIRST_KEYS = ("description", "captured", "targets")
LAST_KEYS = ("llm", "steps")
"""Key order of the written file: what it is first, the recording and the client's
script last (the long parts)."""


def prompt_base(prompt: str) -> dict[str, Any]:
    """The client side `--prompt TEXT` stands for: one session, one prompt, and a client
    that allows each tool call once (a live session's tools should run)."""
    return {
        "description": f"Captured session: {prompt.splitlines()[0][:80] if prompt else ''}",
        "client": {"permission": "allow-once"},
        "steps": [
            {"initialize": {}},
            {"new_session": {"as": "s1"}},
            {"prompt": {"session": "s1", "text": prompt}},
        ],
    }


def fixture_name(name: str, fixtures: Collection[str]) -> str | None:
    """The fixture tool an offered tool name stands for (`mcp__parity__echo` -> `echo`),
    or None for the agent's own tool. The inverse of the fake's `toolnames.resolve`, so
    the scenario replays against agents that spell the fixture tool differently."""
    if name in fixtures:
        return name
    for fixture in fixtures:
        if any(name.endswith(sep + fixture) for sep in SEPARATORS):
            return fixture
    return None


def script_entry(entry: Mapping[str, Any], fixtures: Collection[str]) -> dict[str, Any]:
    """A provider answer as a scenario `llm` entry: tool calls name fixture tools by
    their declared names, and the agent's own tools are marked `builtin: true`."""
    out = dict(entry)
    if "tool_calls" in entry:
        calls = []
        for call in entry["tool_calls"]:
            fixture = fixture_name(str(call.get("name")), fixtures)
            if fixture is None:
                calls.append({**call, "builtin": True})
            else:
                calls.append({**call, "name": fixture})
        out["tool_calls"] = calls
    return out


def compose(
    base: Mapping[str, Any],
    captured: Sequence[Any],
    *,
    target: str,
    dialect: str,
    model: str,
    builtin_tools: bool,
    date: str,
) -> dict[str, Any]:
    """The captured scenario's mapping. `captured` holds the fake's `Captured` records
    (`.entry`, `.request`) or None for a call that was never answered (the agent gave
    it up): such a call has no answer to replay and is left out."""
    answered = [c for c in captured if c is not None]
    fixtures = [str(t["name"]) for t in base.get("tools") or [] if isinstance(t, Mapping)]
    requests = encode([c.request for c in answered])
    llm = []
    for record, request in zip(answered, requests, strict=True):
        entry = script_entry(record.entry, fixtures)
        if request is not None:
            entry["request"] = request
        llm.append(entry)
    how = {
        "target": target,
        "upstream_dialect": dialect,
        "model": model,
        "date": date,
        "builtin_tools": builtin_tools,
    }
    data: dict[str, Any] = {
        "description": base.get("description", "Captured session"),
        "captured": how,
        "targets": list(base.get("targets") or [target]),
    }
    for key, value in base.items():
        if key not in (*FIRST_KEYS, *LAST_KEYS):
            data[key] = value
    data["llm"] = llm
    data["steps"] = list(base.get("steps") or [])
    return data


HEADER = (
    "# yaml-language-server: $schema={schema}\n"
    "# Captured by `parity capture` (docs/capture.md): the `llm` entries are a real model's\n"
    "# answers, each with the request it answered. Re-capture rather than edit them.\n"
)


def refusals(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per `llm` entry that is a provider's HTTP refusal (an `error` with a
    `status`: a wrong key's 401, a 409, a 429 or 5xx), naming the status and the
    provider's error text. An error inside a stream (no status) is an answer, not a
    refusal."""
    out: list[str] = []
    for number, entry in enumerate(entries):
        error = entry.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("status"), int):
            code = f" ({error['code']})" if error.get("code") else ""
            out.append(f"llm[{number}]: HTTP {error['status']}: {error.get('message', '')}{code}")
    return out


def render(data: Mapping[str, Any], schema: str) -> str:
    """The scenario file's text: block YAML as snapshots have it (multi-line strings as
    literal blocks), lines never folded (a folded secret would slip past the line
    check), keys in `compose`'s order."""
    body = dump_yaml(dict(data), width=1_000_000)
    return HEADER.format(schema=schema) + body

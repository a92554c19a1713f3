"""Run problem kinds, and how the driver's and the fake LLM's texts are classified.

`KINDS` is every kind a run problem can have (the scenario schema's
`expect_problems.kind` enum and docs/scenarios.md list the same kinds). The driver and the
fake LLM report problems as text; the tables below classify those texts by their wording,
and a text this harness version does not recognise is kind `other`, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

KINDS: dict[str, str] = {
    "timeout": "a step got no response (or a `wait` not its updates) within its timeout",
    "trigger": "a prompt's cancel trigger, a held answer's or a step's `after`, never fired",
    "exit": "the agent exited, or closed its stdout, before the run was over",
    "stopped": "the run stopped at a step; the later steps did not run",
    "script": "a step the harness could not carry out as written (e.g. `cursor: next` "
    "after a list without nextCursor)",
    "garbage": "a stdout line that is not JSON, over the frame limit, nested deeper than "
    "the harness follows, or not JSON-RPC",
    "capability": "the agent called fs/* or terminal/* without the client capability",
    "stdin": "the agent stopped reading its stdin",
    "startup": "the target could not be started",
    "run-timeout": "the whole-run timeout (`timeouts.run`) ended the run",
    "frame-limit": "the agent sent more lines than the driver records, or requests the "
    "client answered with an error for a limit (past the frame limit, over the line limit)",
    "leftover": "processes the agent started were still running after it ended (killed)",
    "escape": "an fs/* request of the agent went through a link out of the workdir (refused)",
    "driver": "a harness error while driving the run",
    "unreadable": "a frame the harness could not normalize or check, set aside (its step "
    "and index named), or a run it could not",
    "check-limit": "the checks after the run (normalization, conformance, the diff and its "
    "rendering) reached their time limit",
    "unknown-endpoint": "a request to an endpoint the fake LLM does not serve (HTTP 404)",
    "script-exhausted": "a model request after every consumable `llm` entry was used",
    "extra-model-call": "a side request (no tools, while the agent's turns offer tools: a "
    "title, a summary) after every consumable `llm` entry was used and no side entry "
    "answered it",
    "no-entry-matched": "a model request no entry could answer: no side entry matched, in "
    "a script of side entries, or every unused entry is for a prompt not in flight",
    "malformed-request": "a model or tool request the fake LLM could not read",
    "unknown-tool": "a /tools/call for a tool the scenario does not declare",
    "left-open": "a model or tool request still open when the run ended",
    "unused-llm": "a consumable `llm` entry no model request used",
    "approval": "an `approval: ask` fixture tool called without (or against) a "
    "session/request_permission",
    "dialect": "the agent's model calls came in another dialect than its target declares",
    "stale-recording": "a captured scenario's agent sent a request its recording never "
    "answered (re-capture it)",
    "upstream": "a recording run could not reach its provider",
    "other": "a problem text this harness version does not classify",
}
"""Every problem kind, with what it means (the schema's `expect_problems.kind` enum and
docs/scenarios.md list the same kinds)."""


STEP_TEXTS: tuple[tuple[str, str], ...] = (
    (r"cancel trigger ", "trigger"),
    (r"the cancel trigger ", "trigger"),
    (r"the step's trigger ", "trigger"),
    (r"no response to ", "timeout"),
    (r"the answer to .* could not be read: frame \d+ is \d+ bytes, over the line limit", "garbage"),
    (r".*: only \d+ of \d+ .* update\(s\) within ", "timeout"),
    (r"agent exited during ", "exit"),
    (r"agent closed its stdout during ", "exit"),
    (r"no agent process is running", "exit"),
    (r"could not send ", "stdin"),
    (r"cannot start target ", "startup"),
    (r"run timeout \(", "run-timeout"),
    (r"interrupted: ", "run-timeout"),
)

RUN_TEXTS: tuple[tuple[str, str], ...] = (
    (r"frame \d+: (non-JSON line|oversize frame|too deeply nested frame) on stdout", "garbage"),
    (r"frame \d+: too long a number on stdout", "unreadable"),
    (r"frame \d+: agent sent a JSON value that is not a JSON-RPC message", "garbage"),
    (r"agent called \S+ without the client capability", "capability"),
    (r"driver error", "driver"),
    (r"held answer to \S+ \(frame \d+\) was not sent", "trigger"),
    (r"the agent did not read our answer", "stdin"),
    (r"agent exited by itself before teardown", "exit"),
    (r"agent exited during |agent closed its stdout during ", "exit"),
    (r"cannot start target ", "startup"),
    (r"run timeout \(", "run-timeout"),
    (r"run stopped at step ", "stopped"),
    (r"frame limit \(", "frame-limit"),
    (r"frame \d+( \(step \d+\))?: the harness could not ", "unreadable"),
    (r"the harness could not \w+ this run", "unreadable"),
    (r"check limit \(", "check-limit"),
    (r"requests refused: ", "frame-limit"),
    (r"leftover processes: ", "leftover"),
    (r"fs escape: ", "escape"),
    (r"(scenario|launch) file path escapes", "script"),
)

FLOOD_KINDS = {
    "non-JSON line": "garbage",
    "oversize frame": "garbage",
    "too deep": "garbage",
    "long number": "unreadable",
    "fs escape": "escape",
    "not-jsonrpc": "garbage",
    "capability": "capability",
    "driver": "driver",
    "stdin": "stdin",
    "exit": "exit",
}
"""The driver's own problem kinds (`Recording.problem`), as named in its `... and N more`."""


def classify(text: str, table: Iterable[tuple[str, str]]) -> str:
    for pattern, kind in table:
        if re.match(pattern, text):
            return kind
    return "other"


def llm_kind(problem: str) -> str:
    if problem == "unknown endpoint":
        return "unknown-endpoint"
    if problem == "script exhausted":
        return "script-exhausted"
    if problem.startswith("extra model call"):
        return "extra-model-call"
    if problem.startswith("no entry matched"):
        return "no-entry-matched"
    if problem.startswith("malformed request"):
        return "malformed-request"
    if problem.startswith("unknown tool"):
        return "unknown-tool"
    if problem == "run closed":
        return "left-open"
    if problem.startswith("stale recording"):
        return "stale-recording"
    if problem.startswith("upstream unreachable"):
        return "upstream"
    return "other"

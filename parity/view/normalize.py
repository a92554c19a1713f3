"""Normalization: a `Transcript` -> the snapshot-ready view of one run.

The view is plain data (dicts, lists, str, int, ...) with a fixed skeleton key order, so
it dumps to readable YAML and compares exactly (`parity.core.exact`). Everything random
or machine specific is replaced so two runs of the same agent give the same view:

- ids become positional tokens per kind (`<session:1>`, `<message:2>`, ..., any other
  UUID `<uuid:n>`), the same value always the same token within a run, wherever it
  appears, so references stay linked;
- the run's paths (`transcript.paths`) become `<workdir>`, `<home>`, `<tmp>`, ...;
- wall-clock values (frame times, ISO timestamps, `*At` fields) are removed or `<time>`,
  the run's calendar date `<date>`; a timestamp the scenario supplied (a file's, a tool
  result's) is data, and stays.

Profiles: `exact` keeps every wire fact; `semantic` (for unlike agents) merges adjacent
chunks of one message, folds each tool call into its final state, drops `_meta`, usage
numbers, side model requests and how processes ended. Masks (selectors, see
`parity.scenario.selectors`) then replace values with `<masked>` and are counted in the
view so masking never hides an assertion silently.

This module lays the view out; its parts are `parity.view.tokens` (positional ids,
paths, dates), `parity.view.ownership` (which step each frame belongs to),
`parity.view.entries` (one frame -> its entry), `parity.view.semantic` (the semantic
profile) and `parity.view.masks`. `docs/transcript.md` describes the view.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from parity.core.transcript import ModelRequest, ProcessRecord, StepRecord, Transcript
from parity.scenario.model import Rule, Scenario, Step
from parity.view.entries import AGENT_REQUEST_KINDS, Entries
from parity.view.masks import apply_masks
from parity.view.ownership import Ownership, began_before, ownership, same
from parity.view.semantic import link_tool_calls, semantic
from parity.view.tokens import Tokens, hashable, run_dates

PROFILES = ("exact", "semantic")

_SCENARIO_LINE = re.compile(r"(<repo>/\S+?\.ya?ml):\d+:\d+:")
"""A step problem quoting the scenario's file:line:col (a script error): the view keeps
the file and drops the position, so editing the scenario above the step does not change
the snapshot (the live failure still shows the line)."""


def scripted_tool_call_ids(scenario: Scenario) -> list[str]:
    """Tool call ids the scenario's LLM script chooses (kept verbatim, never tokenized),
    in script order (the semantic profile links an agent's own ids to them in order)."""
    ids: dict[str, None] = {}
    for entry in scenario.llm:
        for call in entry.params.get("tool_calls") or []:
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                ids[call["id"]] = None
        for chunk in entry.params.get("chunks") or []:
            if not isinstance(chunk, dict):
                continue
            if chunk.get("type") == "tool-call-delta" and isinstance(chunk.get("id"), str):
                ids[chunk["id"]] = None
            block = chunk.get("block")
            if isinstance(block, dict) and isinstance(block.get("id"), str):
                ids[block["id"]] = None
    return list(ids)


def supplied_texts(scenario: Scenario) -> list[str]:
    """Every string the scenario hands the agent or the model: its files, fixture tools'
    results, the model's script, the steps' prompts and params, the client's answers.
    Data in them is the scenario's, not the agent's clock: `view` leaves the ISO
    timestamps they hold as they are, so an agent that changes one is seen to."""
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, Mapping):
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)
        elif isinstance(value, Step):
            walk(value.params)

    walk(scenario.files)
    walk(scenario.home_files)
    walk([tool.content for tool in scenario.tools])
    # A captured entry's `request` is what the agent sent in the capture, not data.
    walk([{k: v for k, v in entry.params.items() if k != "request"} for entry in scenario.llm])
    walk(scenario.steps)
    walk(scenario.client)
    return out


def view(
    transcript: Transcript,
    profile: str,
    masks: Sequence[Rule],
    *,
    scripted_ids: Iterable[str] = (),
    dates: Iterable[dt.date] | None = None,
    supplied: Iterable[str] = (),
) -> dict[str, Any]:
    """The normalized, snapshot-ready view of one run (see docs/transcript.md).

    `profile` is `exact` or `semantic`. `masks` apply when their `targets` is None or
    names `transcript.target`. `scripted_ids` are tool call ids chosen by the scenario
    (`scripted_tool_call_ids`); they stay verbatim because they are deterministic.
    `dates` are the calendar dates the run may have printed (peers put today's date in
    their system prompts), replaced by `<date>`; default `run_dates()`, which assumes
    the view is made right after the run (the transcript records no wall-clock time).
    `supplied` are the strings the scenario supplied (`supplied_texts`): the ISO
    timestamps in them stay, every other one becomes `<time>`.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}: expected one of {', '.join(PROFILES)}")
    tokens = Tokens(
        transcript.paths,
        scripted_ids,
        run_dates() if dates is None else dates,
        pids=[process.pid for process in transcript.processes],
        supplied=supplied,
    )
    _discover(transcript, tokens)
    out = _Builder(transcript, tokens).build()
    if profile == "semantic":
        out = link_tool_calls(semantic(out), list(scripted_ids))
    applicable = [m for m in masks if m.targets is None or transcript.target in m.targets]
    out["masked"] = apply_masks(out, applicable)
    return out


def model_order(requests: Sequence[ModelRequest]) -> list[ModelRequest]:
    """The model view's order: the main agent's requests as they arrived, then each child
    agent's, child by child. A child works beside its parent, so their requests interleave
    differently from run to run; each one's own requests come in a fixed order, and so
    do the tokens of the child sessions they name."""
    return sorted(requests, key=lambda r: r.agent)


def _discover(transcript: Transcript, tokens: Tokens) -> None:
    """Number ids in wire order: frames first, then model bodies."""
    for frame in transcript.frames:
        msg = frame.message
        if not isinstance(msg, dict):
            continue
        tokens.discover(msg.get("params"))
        tokens.discover(msg.get("result"))
        tokens.discover(msg.get("error"))
        if "method" in msg and "id" in msg and hashable(msg["id"]):
            if frame.direction == "out":
                tokens.register("request", ("out", msg["id"]))
            else:
                kind = AGENT_REQUEST_KINDS.get(str(msg["method"]), "agent-request")
                tokens.register(kind, ("in", msg["id"]))
    for request in model_order(transcript.model_requests):
        tokens.discover(request.body)
    # Second pass: UUIDs nobody put under an id key (installation ids, trace ids, temp
    # file names) are random too; ids of a known kind keep that kind's token.
    for frame in transcript.frames:
        tokens.discover_uuids(frame.message)
    for request in model_order(transcript.model_requests):
        tokens.discover_uuids(request.body)


class _Builder:
    """Assembles the view of one transcript; one instance per call."""

    def __init__(self, transcript: Transcript, tokens: Tokens) -> None:
        self.t = transcript
        self.tokens = tokens
        self.frames: Ownership = ownership(transcript)
        self.used = self.frames.used
        self.entries = Entries(
            tokens, transcript.frames, self.frames.answers, tokens.count("session") > 1
        )

    def build(self) -> dict[str, Any]:
        owner, own = self.frames.owner, self.frames.own
        before: list[Any] = []
        after: list[Any] = []
        for f in self.t.frames:
            if f.seq not in owner and f.seq not in self.used:
                loose = self.entries.loose(f)
                (after if any(began_before(s, f) for s in self.t.steps) else before).append(loose)
        by_step: dict[int, list[int]] = {}
        for seq in sorted(owner):
            by_step.setdefault(owner[seq], []).append(seq)
        steps = [
            self._step(i, step, by_step.get(i, []), own) for i, step in enumerate(self.t.steps)
        ]
        out: dict[str, Any] = {}
        if self.t.agent:
            out["agent"] = dict(self.t.agent)
        if before:
            out["before"] = before
        out["steps"] = steps
        out["after"] = after
        if self.t.files:
            out["files"] = {name: self.tokens.scrub(text) for name, text in self.t.files.items()}
        out["model"] = [self._model(r) for r in model_order(self.t.model_requests)]
        out["process"] = self._process()
        return out

    def _step(self, i: int, step: StepRecord, frames: list[int], own: set[int]) -> dict[str, Any]:
        item: dict[str, Any] = {
            "step": i + 1,
            "do": step.kind,
            "label": self.tokens.scrub(step.label),
        }
        if step.request is not None:
            item["send"] = self.entries.send(step.request)
        if isinstance(step.response, dict):
            if "error" in step.response:
                item["error"] = self.entries.error(step.response["error"])
            else:
                item["result"] = self.tokens.scrub(step.response.get("result"))
        # What the agent sends after answering the step's request is late (a prompt is
        # settled only once its updates are out, docs/contract.md §2); keep it apart so the diff
        # sees the difference between an update on time and the same update too late.
        answered = next(
            (q for q in frames if q in own and same(self.t.frames[q].message, step.response)),
            None,
        )
        updates: list[Any] = []
        requests: list[Any] = []
        notes: list[Any] = []
        late: list[Any] = []
        for seq in frames:
            if seq in own or seq in self.used:
                continue
            if answered is not None and seq > answered:
                late.append(self.entries.loose(self.t.frames[seq]))
                continue
            bucket, entry = self.entries.classify(self.t.frames[seq])
            if bucket == "agent_request":
                # Updates and agent requests are separate lists; this keeps their
                # interleaving (docs/contract.md §2: a permission request follows its tool_call).
                answer = entry.pop("answer")
                entry.update(after_updates=len(updates), answer=answer)
                # A held answer sent only after the step's own response (docs/scenarios.md,
                # "Held answers"): the same answer on time would mean another run.
                answer_seq = self.frames.answers.get(seq)
                if answered is not None and answer_seq is not None and answer_seq > answered:
                    entry["answered_after_result"] = True
            {"update": updates, "agent_request": requests}.get(bucket, notes).append(entry)
        if step.problem:
            notes.append(
                {"problem": _SCENARIO_LINE.sub(r"\1:", self.tokens.scrub_text(step.problem))}
            )
        for key, value in (
            ("updates", updates),
            ("agent_requests", requests),
            ("notes", notes),
            ("late", late),
        ):
            if value:
                item[key] = value
        return item

    def _model(self, r: ModelRequest) -> dict[str, Any]:
        item: dict[str, Any] = {"path": r.path}
        if r.method != "POST":
            item["method"] = r.method
        item["body"] = self.tokens.scrub(r.body)
        if r.status != 200:
            item["status"] = r.status
        if r.aborted:
            item["aborted"] = True
        if r.side:
            item["side"] = True
        if r.problem:
            item["problem"] = self.tokens.scrub_text(r.problem)
        if r.agent:
            item["agent"] = r.agent
        return item

    def _process(self) -> dict[str, Any]:
        out: dict[str, Any] = {"exit": [_exit(p) for p in self.t.processes]}
        if self.t.problems:
            out["problems"] = [self.tokens.scrub_text(p) for p in self.t.problems]
        return out


def _exit(p: ProcessRecord) -> dict[str, Any]:
    # pid, argv (ports, paths) and stderr are machine noise; how it ended is not.
    out: dict[str, Any] = {}
    if p.stopped_by is not None:
        out["by"] = p.stopped_by
    if p.exit_code is not None:
        out["code"] = p.exit_code
    if p.signal is not None:
        out["signal"] = p.signal
    return out

"""`parity capture`'s run: the client side against one target, a provider behind the fake.

The I/O around `compose`: run the client steps against the target with the fake LLM in
recording mode (`parity.fakellm.upstream`), write the scenario (atomically, and only
once it is valid and free of the key), then replay it keyless against the same target
and compare the two normalized views, so the user learns at once whether the scenario
reproduces what was captured.
"""

from __future__ import annotations

import datetime as dt
import difflib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from parity.capture.compose import compose, refusals, render
from parity.checks.problems import run_problems
from parity.config.project import Config
from parity.core.transcript import Transcript
from parity.engine.postrun import normalized
from parity.engine.runner import Runner
from parity.fakellm.identity import leaks, map_strings
from parity.fakellm.upstream import Upstream
from parity.scenario.errors import ScenarioInvalid
from parity.scenario.load import build_scenario, load_scenario
from parity.scenario.model import Scenario
from parity.view.dump import dump_view

SCHEMA = Path(__file__).resolve().parents[1] / "schema" / "scenario.schema.json"


class CaptureError(Exception):
    """Capture cannot go on (nothing was written, or what was written is named)."""


class CaptureRefused(CaptureError):
    """The provider refused a model call (HTTP 401, 409, ...): the run recorded the
    refusal instead of an answer, so nothing was written (`keep_refused` writes it)."""


@dataclass
class Outcome:
    """What a capture did."""

    path: Path
    entries: int
    """Model calls recorded."""
    problems: list[str] = field(default_factory=list)
    """Run problems of the capture run (the scenario is written all the same)."""
    replay_problems: list[str] = field(default_factory=list)
    replay_diff: str | None = None
    """None: the keyless replay's view equals the captured run's."""
    verified: bool = False
    transcript: Transcript | None = None
    """The capture run's transcript (in memory only: it is never written)."""
    refused: list[str] = field(default_factory=list)
    """The provider's refusals kept in the scenario (`keep_refused`), one line each."""


def load_base(path: Path) -> dict[str, Any]:
    """A `--steps` file: a scenario without `llm` (any `llm` it has is replaced). Errors
    name the file, line and key, as for any scenario."""
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    if isinstance(data, list):  # a bare list of steps
        data = {"description": f"Captured session ({path.stem})", "steps": data}
        text = yaml.safe_dump(data, sort_keys=False)
    if not isinstance(data, dict):
        raise CaptureError(f"{path}: a steps file is a scenario mapping or a list of steps")
    data.pop("llm", None)
    try:
        build_scenario(text, path)
    except ScenarioInvalid as exc:
        raise CaptureError(f"invalid steps file:\n{exc}") from None
    return data


def workspace_files(directory: Path) -> dict[str, str]:
    """`--files DIR`: every file below DIR as `files` (relative path -> text)."""
    out: dict[str, str] = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        rel = path.relative_to(directory).as_posix()
        try:
            out[rel] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise CaptureError(f"{path}: not UTF-8 text (scenario files are text)") from None
    return out


def _secret_check(text: str, secrets: Sequence[str]) -> None:
    lines = leaks(text, secrets)
    found: list[str] = []

    def look(value: str) -> str:
        if any(secret and secret in value for secret in secrets):
            found.append(value)
        return value

    # Parsed too: a value YAML had to quote or escape could hide from the line check.
    map_strings(yaml.safe_load(text), look)
    if lines or found:
        where = ", ".join(map(str, lines)) or "inside a quoted value"
        raise CaptureError(
            f"the API key's value is in the captured scenario (line {where}); nothing was written"
        )


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _view_diff(scenario: Scenario, captured: Transcript, replayed: Transcript) -> str | None:
    before = normalized(scenario, captured)
    after = normalized(scenario, replayed)
    if before == after:
        return None
    # As snapshot text: the diff reads like the one `parity run` shows for a snapshot.
    lines = difflib.unified_diff(
        dump_view(before).splitlines(),
        dump_view(after).splitlines(),
        "captured run",
        "keyless replay",
        lineterm="",
    )
    return "\n".join(list(lines)[:200])


def capture(
    config: Config,
    *,
    target: str,
    upstream: Upstream,
    base: Mapping[str, Any],
    out: Path,
    builtin_tools: bool = True,
    verify: bool = True,
    keep_refused: bool = False,
) -> Outcome:
    """Run the capture and write `out`; see the module docstring. A model call the
    provider refused raises `CaptureRefused` before anything is written, unless
    `keep_refused`."""
    with Runner(config) as runner:
        why = runner.unavailable(target)
        if why is not None:
            raise CaptureError(f"target {target!r} cannot run here: {why}")
        # The capture run itself: the base with `captured` set, so it offers the same
        # tools (built-in or not) that the replay will.
        how = {"target": target, "builtin_tools": builtin_tools}
        live_text = yaml.safe_dump({**base, "captured": how, "llm": []}, sort_keys=False)
        live = build_scenario(live_text, out, config.scenarios_dir)
        transcript, run = runner.run_once(live, target, upstream)
        data = compose(
            base,
            run.captured,
            target=target,
            dialect=upstream.dialect,
            model=upstream.model,
            builtin_tools=builtin_tools,
            date=dt.date.today().isoformat(),
        )
        text = render(data, os.path.relpath(SCHEMA, out.parent.resolve()))
        _secret_check(text, [upstream.api_key])
        refused = refusals(data["llm"])
        if refused and not keep_refused:
            lines = "\n".join(f"  {line}" for line in refused)
            raise CaptureRefused(
                f"the provider refused {len(refused)} of {len(data['llm'])} model call(s):\n"
                f"{lines}\nnothing was written (--keep-refused writes the scenario anyway)"
            )
        try:
            build_scenario(text, out, config.scenarios_dir)
        except ScenarioInvalid as exc:  # a harness bug: say so, keep the text
            _write(out.with_suffix(".invalid.yaml"), text)
            raise CaptureError(
                f"the captured scenario is invalid (kept as .invalid.yaml):\n{exc}"
            ) from None
        _write(out, text)
        found = [str(p) for p in run_problems(live, transcript)]
        outcome = Outcome(out, len(data["llm"]), found, transcript=transcript, refused=refused)
        if verify:
            replay = load_scenario(out, config.scenarios_dir)
            again = runner.execute(replay, target)
            outcome.replay_problems = [str(p) for p in run_problems(replay, again)]
            outcome.replay_diff = _view_diff(replay, transcript, again)
            outcome.verified = True
        return outcome

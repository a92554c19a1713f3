"""`parity review`: walk every changed or new snapshot, one at a time (like `cargo insta
review`).

The selected scenarios' targets that can run here are run first (the same `Runner` the
pytest plugin uses, no pytest), each run's view is serialized as `parity record` would
write it, and every run whose text differs from its recorded snapshot (or that has none
yet) becomes one review item: a header `[i/N] <scenario> :: <target> (changed|new)`, the
categorized diff against the recorded view (`parity.checks.diff`; a new snapshot shows its YAML,
trimmed), then `accept (a), reject (r), skip (s), quit (q)?`. Accepting writes the
snapshot; rejecting and skipping leave the file as it is (the two differ only in the
count); quitting skips the rest.

A run with problems (`blocking_problems`: the agent crashed, a step timed out, ...) is never
accepted: its problems are shown and only reject, skip and quit are offered, also under
`--accept-all`. Without a terminal on stdin there is nobody to ask: the command refuses
(exit 2) unless `--accept-all` or `--reject-all` says what to do. `A` accepts the item
and every later clean item of the same scenario.

`--from DIR` reviews the pending snapshots a run wrote (`parity.cli.pending`) instead
of running anything.

The harness modules (runner, snapshot, diff) are imported only when the command runs, as
in `parity.cli`.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from parity.config.project import Config
from parity.core.transcript import Transcript

if TYPE_CHECKING:
    from parity.engine.runner import Runner
    from parity.scenario.model import Scenario

Mode = Literal["ask", "accept-all", "reject-all"]
Decision = Literal["accept", "accept-scenario", "reject", "skip", "quit"]

PROMPT = "accept (a), accept the rest of this scenario (A), reject (r), skip (s), quit (q)? "
PROMPT_BLOCKED = "reject (r), skip (s), quit (q)? "
NOT_A_TTY = (
    "parity review: stdin is not a terminal, so there is nobody to ask; "
    "run it in a terminal, or pass --accept-all or --reject-all"
)
NEW_LINES = 80
"""Lines of a new snapshot's YAML shown before the rest is counted."""
UNIFIED_LINES = 40
"""Lines of the text diff shown when the categorized diff finds nothing."""
SUFFIXES = (".yaml", ".yml")
ANSWERS: dict[str, Decision] = {
    "a": "accept",
    "accept": "accept",
    "r": "reject",
    "reject": "reject",
    "s": "skip",
    "skip": "skip",
    "q": "quit",
    "quit": "quit",
}


def blocking_problems(scenario: Scenario, target: str, transcript: Transcript) -> list[str]:
    """What went wrong in a run (`RunResult.transcript`); a run with any is never accepted.

    The transcript's run-level `problems` and every step's `problem`. This is the one
    place the check lives; the richer `run_problems(scenario, transcript)` of
    `parity.checks.problems` (unexpected problems for `target`, after
    `scenario.expect_problems`) could take it over."""
    out = list(transcript.problems)
    for step in transcript.steps:
        if step.problem:
            out.append(f"{step.label or step.kind or 'step'}: {step.problem}")
    return out


@dataclass
class Pending:
    """One run whose snapshot text differs from the recorded one, or that has none."""

    scenario: Scenario
    target: str
    path: Path
    """Where its snapshot lives (`parity.engine.store.snapshot_path`)."""
    recorded: str | None
    """The snapshot file's text; None when there is no snapshot yet."""
    text: str
    """This run's snapshot text (`dump_view` of its view)."""
    view: Any
    problems: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    pending: Path | None = None
    """The pending file it came from (`parity.cli.pending`): removed once decided."""

    @property
    def kind(self) -> str:
        return "new" if self.recorded is None else "changed"

    @property
    def blocked(self) -> bool:
        """A run with problems: it cannot be accepted."""
        return bool(self.problems)


@dataclass
class Tally:
    accepted: int = 0
    rejected: int = 0
    skipped: int = 0

    def line(self) -> str:
        return f"accepted {self.accepted}, rejected {self.rejected}, skipped {self.skipped}"


# -- collecting ------------------------------------------------------------------------


def scenario_files(config: Config, paths: Sequence[Path]) -> list[Path]:
    """The scenario files to review: the given files, directories expanded to the
    scenario files below them; nothing given means the whole scenarios directory."""
    out: list[Path] = []
    for path in paths or [config.scenarios_dir]:
        if path.is_dir():
            out += sorted(
                p
                for p in path.rglob("*")
                if p.suffix in SUFFIXES
                and p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        elif path not in out:
            out.append(path)
    return out


def collect(
    config: Config,
    files: Iterable[Path],
    runner: Runner,
    *,
    select: set[str] | None = None,
    log: Callable[[str], None] = lambda line: None,
    added: Sequence[str] = (),
) -> tuple[list[Pending], list[str]]:
    """Run every selected target that can run, and each `added` one (`--targets +NAME`)
    that joins the scenario; `(pending items, notes)`, where the notes say what was not
    reviewed and why (an invalid file, a target that cannot run here)."""
    from parity.engine.store import read_text, snapshot_path
    from parity.scenario.errors import ScenarioInvalid
    from parity.scenario.load import load_scenario
    from parity.targets.spec import joins
    from parity.view.dump import dump_view

    pending: list[Pending] = []
    notes: list[str] = []
    for path in files:
        try:
            scenario = load_scenario(path, config.scenarios_dir)
        except ScenarioInvalid as exc:
            notes.append(f"invalid, not run: {path} ({len(exc.errors)} finding(s); see validate)")
            continue
        own_tools = scenario.calls_builtin_tools
        joining = [n for n in added if joins(n, scenario.targets, own_tools, config.targets)]
        for target in [*scenario.targets, *joining]:
            if select is not None and target not in select:
                continue
            why = runner.unavailable(target)
            if why is not None:
                notes.append(f"not run: {scenario.name} :: {target} ({why})")
                continue
            log(f"running {scenario.name} :: {target}")
            try:
                result = runner.result(scenario, target)
            except Exception as exc:  # one broken run must not end the whole review
                notes.append(
                    f"not run: {scenario.name} :: {target} "
                    f"(harness error: {type(exc).__name__}: {exc})"
                )
                continue
            text = dump_view(result.view)
            snap = snapshot_path(config.snapshots_dir, scenario.name, target)
            recorded = read_text(snap)
            if recorded == text:
                continue
            pending.append(
                Pending(
                    scenario,
                    target,
                    snap,
                    recorded,
                    text,
                    result.view,
                    blocking_problems(scenario, target, result.transcript),
                    list(result.findings),
                )
            )
    return pending, notes


# -- showing ---------------------------------------------------------------------------


def _rel(path: Path) -> str:
    return os.path.relpath(path, Path.cwd())


def _trim(lines: list[str], limit: int, what: str) -> list[str]:
    if len(lines) <= limit:
        return lines
    return [*lines[:limit], f"... {len(lines) - limit} more {what} ({len(lines)} in all)"]


def describe(item: Pending, index: int, total: int) -> str:
    """One review item: header, what changed, and the run's problems and findings."""
    from parity.checks.diff import compare
    from parity.view.dump import load_view

    lines = [f"[{index}/{total}] {item.scenario.name} :: {item.target} ({item.kind})"]
    if item.recorded is None:
        lines.append(f"no snapshot yet at {_rel(item.path)}; this run would write:")
        lines += ["  " + line for line in _trim(item.text.splitlines(), NEW_LINES, "line(s)")]
    else:
        lines.append(f"recorded snapshot: {_rel(item.path)}")
        try:
            old = load_view(item.recorded)
        except Exception:  # a hand-broken file: the text diff below still shows it
            old = None
        found = False
        if isinstance(old, dict) and isinstance(item.view, dict):
            report = compare(
                old,
                item.view,
                profile=item.scenario.profile,
                diverge=[],
                ref_name="recorded",
                other_name=item.target,
                scenario=item.scenario.name,
            )
            lines.append(report.render())
            found = bool(report.differences)
        if not found:
            # Only what the parity diff ignores changed (`masked`, `agent`) or the file
            # does not parse: the text diff says what accepting would change.
            diff = list(
                difflib.unified_diff(
                    item.recorded.splitlines(),
                    item.text.splitlines(),
                    f"{_rel(item.path)} (recorded)",
                    f"{_rel(item.path)} (this run)",
                    n=2,
                    lineterm="",
                )
            )
            lines += ["  " + line for line in _trim(diff, UNIFIED_LINES, "diff line(s)")]
    if item.findings:
        lines.append(f"conformance: {len(item.findings)} finding(s)")
        lines += ["  " + f for f in _trim(item.findings, 5, "finding(s)")]
    if item.problems:
        lines.append("run problems (a run with problems cannot be accepted):")
        for problem in item.problems:
            first, *rest = problem.splitlines() or [""]
            lines += [f"  - {first}", *(f"    {line}" for line in rest)]
    return "\n".join(lines)


# -- deciding --------------------------------------------------------------------------


def ask(item: Pending, prompt: Callable[[str], str], out: TextIO) -> Decision:
    """Ask until the answer is one of the offered ones; end of input (or Ctrl-C at the
    prompt) means quit, so what was decided so far is still counted."""
    while True:
        try:
            raw = prompt(PROMPT_BLOCKED if item.blocked else PROMPT).strip()
        except (EOFError, KeyboardInterrupt):  # Ctrl-D / Ctrl-C at the prompt: quit
            print(file=out)
            return "quit"
        answer = raw.lower()
        decision = "accept-scenario" if raw == "A" else ANSWERS.get(answer)
        if decision == "accept-scenario" and item.blocked:
            decision = "accept"  # refused just below, with the reason
        if decision == "accept" and item.blocked:
            print("cannot accept: this run had problems (listed above)", file=out)
        elif decision is not None:
            return decision
        elif answer:
            offered = "r, s or q" if item.blocked else "a, r, s or q"
            print(f"answer {offered}", file=out)


def accept(item: Pending) -> None:
    """Write the run's snapshot (the store writes atomically)."""
    from parity.engine.store import write_text

    write_text(item.path, item.text)


def walk(
    items: Sequence[Pending],
    *,
    mode: Mode,
    prompt: Callable[[str], str] = input,
    out: TextIO = sys.stdout,
) -> Tally:
    """Show each item and act on its decision; quitting counts the rest as skipped."""
    from parity.engine.store import remove

    tally = Tally()
    batch: str | None = None  # a scenario whose remaining clean items are accepted
    for index, item in enumerate(items, 1):
        print(describe(item, index, len(items)), file=out, flush=True)
        if mode == "reject-all":
            decision: Decision = "reject"
        elif mode == "accept-all" or batch == item.scenario.name:
            decision = "skip" if item.blocked else "accept"
        else:
            decision = ask(item, prompt, out)
        if decision == "accept-scenario":
            batch, decision = item.scenario.name, "accept"
        if decision == "quit":
            tally.skipped += len(items) - index + 1
            break
        if decision == "accept":
            accept(item)
            tally.accepted += 1
            print(f"accepted: wrote {_rel(item.path)}", file=out)
        elif decision == "reject":
            tally.rejected += 1
            print("rejected: snapshot left as it was", file=out)
        else:
            tally.skipped += 1
            why = " (run had problems, not accepted)" if mode == "accept-all" else ""
            print(f"skipped{why}", file=out)
        if decision in ("accept", "reject") and item.pending is not None:
            remove(item.pending)  # decided: no longer pending
        print(file=out)
    return tally


def review(
    config: Config,
    paths: Sequence[Path],
    *,
    select: set[str] | None = None,
    added: Sequence[str] = (),
    pending: tuple[list[Pending], list[str]] | None = None,
    accept_all: bool = False,
    reject_all: bool = False,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
) -> int:
    """The `parity review` command: run, then walk the changes. Exit 0, or 2 when it
    would have to ask and stdin is not a terminal (checked before anything runs)."""
    from parity.engine.runner import Runner

    if accept_all and reject_all:
        raise ValueError("accept_all and reject_all exclude each other")
    mode: Mode = "accept-all" if accept_all else "reject-all" if reject_all else "ask"
    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if out is None else out
    if mode == "ask" and not stdin.isatty():
        print(NOT_A_TTY, file=sys.stderr)
        return 2
    if not paths and not config.scenarios_dir.is_dir():
        print(f"parity review: no scenarios directory at {config.scenarios_dir}", file=sys.stderr)
        return 2
    files = scenario_files(config, paths)
    if pending is not None:  # `--from DIR` (`parity.cli.pending`): nothing runs
        items, notes = pending
    else:
        with Runner(config) as runner:
            items, notes = collect(
                config,
                files,
                runner,
                select=select,
                log=lambda line: print(line, file=sys.stderr, flush=True),
                added=added,
            )
    for note in notes:
        print(note, file=out)
    if not items:
        print("no changed or new snapshots", file=out)
        return 0
    print(f"{len(items)} snapshot(s) to review\n", file=out)
    tally = walk(items, mode=mode, out=out)
    print(tally.line(), file=out)
    return 0

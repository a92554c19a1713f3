"""Pure rendering of run results as text: the summary's notes, mask and findings lines,
failure tails, side-by-side views.

Everything here takes plain data (outcome records, transcripts) and returns text, so
the plugin and the CLI share one rendering and tests need no process. The summary's
table is `parity.report.matrix`.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Mapping, Sequence

from parity.core.printable import printable
from parity.core.transcript import Transcript
from parity.report.outcome import Outcome
from parity.report.rows import ExpectedRow, FindingsRow, MaskedRow


def parity_notes(outcomes: Sequence[Outcome], skips: bool = True) -> list[str]:
    """Plain sentences about parity checks that did not run, or ran on a recording
    (without why they did not run unless `skips`: the summary at a glance states every
    skip reason once, in its own section)."""
    checks = [o for o in outcomes if o.kind == "parity"]
    skipped = Counter(o.reason for o in checks if o.status == "skip")
    recorded = Counter(o.reason for o in checks if o.status in ("pass", "differs") and o.reason)
    lines = []
    total = sum(skipped.values())
    ran = len(checks) - total
    lines.append(f"parity checks: {len(checks)} collected, {ran} ran, {total} did not run")
    for reason, count in sorted(skipped.items()) if skips else ():
        lines.append(f"  {count} did not run: {reason}")
    for reason, count in sorted(recorded.items()):
        lines.append(f"  {count} ran against a recording: {reason}")
    return lines


def counts_line(outcomes: Sequence[Outcome]) -> str:
    """One line: how many scenario items passed, failed, differed, skipped, were new."""
    counts: Counter[str] = Counter(o.status for o in outcomes)
    order = ("pass", "fail", "differs", "skip", "new")
    return ", ".join(f"{counts[s]} {s}" for s in order if counts[s]) or "nothing ran"


def mask_lines(masked: Sequence[MaskedRow]) -> list[str]:
    """Summary lines for applied masks, one row per (scenario, target, mask).

    Every mask is listed with what it hid, so masking never silently swallows an
    assertion; a mask that matched nothing is called out as stale."""
    if not masked:
        return []
    lines = [
        f"masks: {sum(1 for m in masked if m.count)} applied, "
        f"{sum(1 for m in masked if not m.count)} matched nothing"
    ]
    for m in sorted(masked):
        what = f"{m.count} value(s) masked" if m.count else "matched nothing (stale mask?)"
        lines.append(
            f"  {m.scenario} {m.target}: {m.path}: {what}" + (f" ({m.reason})" if m.reason else "")
        )
    return lines


def expected_lines(rows: Sequence[ExpectedRow]) -> list[str]:
    """The summary's list of expected problems, per scenario x target."""
    if not rows:
        return []
    runs = {(r.scenario, r.target) for r in rows}
    lines = [f"expected problems: {sum(r.times for r in rows)} in {len(runs)} run(s)"]
    for r in sorted(rows):
        again = f" (x{r.times})" if r.times > 1 else ""
        lines.append(f"  {r.scenario} {r.target}: {r.problem}{again} ({r.reason})")
    return lines


FINDINGS_SHOWN = 5
"""Findings listed per run in the summary; the rest are counted (`parity show` has all)."""


def _kind(finding: str) -> str:
    # Rendered findings start with `[kind]` (`conformance.Finding.__str__`).
    return finding[1 : finding.index("]")] if finding.startswith("[") and "]" in finding else "?"


def findings_lines(rows: Sequence[FindingsRow], shown: int = FINDINGS_SHOWN) -> list[str]:
    """Summary lines for conformance findings, per scenario x target, counted by kind.

    Rows without findings are left out; under `fail` the run's item already failed, under
    `warn` this is the only place the findings show (besides `parity show`)."""
    rows = [r for r in rows if r.findings]
    if not rows:
        return []
    total = sum(len(r.findings) for r in rows)
    lines = [f"conformance findings: {total} in {len(rows)} run(s)"]
    for scenario, target, policy, found in (
        (r.scenario, r.target, r.policy, r.findings)
        for r in sorted(rows, key=lambda r: (r.scenario, r.target))
    ):
        kinds = Counter(_kind(f) for f in found)
        counted = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        effect = "failed its item" if policy == "fail" else "warning only"
        lines.append(f"  {scenario} {target} ({policy}: {effect}): {counted}")
        lines += [f"    {f}" for f in found[:shown]]
        if len(found) > shown:
            lines.append(f"    ... {len(found) - shown} more (`parity show {scenario} {target}`)")
    return lines


def findings_block(found: Sequence[str], policy: str) -> str:
    """The findings of one run as text: a failing item's opening, or `parity show`'s."""
    if not found:
        return "conformance: no findings"
    head = f"conformance ({policy}): {len(found)} finding(s)"
    return "\n".join([head, *(f"  {f}" for f in found)])


# -- failure context -------------------------------------------------------------------


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def transcript_tail(transcript: Transcript, frames: int = 20, width: int = 240) -> str:
    """The last `frames` raw frames of a transcript, one per line, with direction."""
    rows = transcript.frames[-frames:]
    out = [
        f"  #{f.seq} {'->' if f.direction == 'out' else '<-'} {_clip(printable(f.raw), width)}"
        + (f"  [parse error: {printable(f.parse_error)}]" if f.parse_error else "")
        for f in rows
    ]
    problems = list(transcript.problems)
    problems += [
        f"step {s.index + 1} ({s.label}): {s.problem}" for s in transcript.steps if s.problem
    ]
    if problems:
        out.append("  problems:")
        out += [f"    {printable(p)}" for p in problems]
    return "\n".join(out) if out else "  (no frames)"


def stderr_tail(transcript: Transcript, lines: int = 30) -> str:
    """The end of each agent process's stderr, with its exit status."""
    out = []
    for i, proc in enumerate(transcript.processes):
        status = f"exit {proc.exit_code}"
        if proc.signal:
            status += f", signal {proc.signal}"
        if proc.stopped_by:
            status += f", stopped by {proc.stopped_by}"
        out.append(f"  process {i} ({status}):")
        text = proc.stderr_tail.rstrip("\n").splitlines()[-lines:]
        # An agent's stderr is its own bytes: escaped, so a terminal shows them.
        out += [f"    {printable(line)}" for line in text] or ["    (empty)"]
    return "\n".join(out) if out else "  (no process started)"


def failure_text(headline: str, diff: str, transcripts: Mapping[str, Transcript]) -> str:
    """What a failing item shows: the categorized diff first, then per target the raw
    transcript tail and the agent's stderr tail."""
    parts = [headline, "", diff.rstrip()]
    for target, transcript in transcripts.items():
        parts += ["", f"--- {target}: transcript tail", transcript_tail(transcript)]
        parts += [f"--- {target}: stderr tail", stderr_tail(transcript)]
    return "\n".join(parts)


def side_by_side(left: str, right: str, titles: tuple[str, str], width: int = 78) -> str:
    """Two texts in aligned columns (difflib opcodes), `|` marking changed rows, `<`/`>`
    rows present on one side only; for `parity show` with two targets."""
    a, b = left.splitlines(), right.splitlines()
    rows = [f"{titles[0][:width]:<{width}}   {titles[1][:width]}", "=" * (2 * width + 3)]

    def row(x: str, mark: str, y: str) -> str:
        return f"{_clip(x, width):<{width}} {mark} {_clip(y, width)}".rstrip()

    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            rows += [row(x, " ", x) for x in a[i1:i2]]
            continue
        xs, ys = a[i1:i2], b[j1:j2]
        for k in range(max(len(xs), len(ys))):
            x = xs[k] if k < len(xs) else ""
            y = ys[k] if k < len(ys) else ""
            mark = "|" if k < len(xs) and k < len(ys) else ("<" if k < len(xs) else ">")
            rows.append(row(x, mark, y))
    return "\n".join(rows)

"""A parity session's results as plain data, for the reports.

The pytest plugin feeds a `Collected` while items run: each scenario's declared facts
(`scenario_record`: description, targets, `diverge` rules, masks), each check's diff
record (`diff_record`: category and path of every difference, the ones `diverge` rules
explained, stale rules) and, when an HTML report was asked for, each target's
normalized view (`view_record`). Under pytest-xdist every worker fills its own and hands
it to the controller at the end (`to_output` / `merge`), as the plugin does with the
scenarios it collected; the controller adds one record per item report (`item`).

At the end `session_data` joins that with the outcomes into one JSON-ready mapping: the
summary matrix (`parity.matrix`), per scenario its cells, diff records, masks, findings
and views, the groups of identical changes, one record per item. The writers are pure
functions of it: `parity.html_report.render_report`, `parity.junit.render_junit`,
`to_json`. Nothing here imports the harness (driver, diff, fake LLM): the diff records
are made from the reports the items already have.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from parity import matrix
from parity import report as rpt
from parity.report import Outcome

if TYPE_CHECKING:
    from parity.checks.diff import ParityReport
    from parity.checks.differences import Difference
    from parity.scenario.model import Rule, Scenario

FORMAT = "acp-parity-results/1"
LIMIT = 200
"""Differences (and explained ones) kept per check; the rest are counted."""
VALUE_CHARS = 200
"""Characters of a differing value kept in a diff record."""


# -- records made while items run -----------------------------------------------------


def rule_record(rule: Rule) -> dict[str, Any]:
    return {
        "path": rule.path,
        "targets": list(rule.targets) if rule.targets is not None else None,
        "reason": rule.reason,
        "line": rule.where.line if rule.where is not None else 0,
    }


def scenario_record(scenario: Scenario, targets: Sequence[str], root: Path) -> dict[str, Any]:
    """What a scenario declares, as the reports show it."""
    try:
        file = scenario.path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        file = str(scenario.path)
    return {
        "name": scenario.name,
        "description": scenario.description,
        "file": file,
        "targets": list(targets),
        "reference": scenario.targets[0] if scenario.targets else "",
        "compare": scenario.compare,
        "profile": scenario.profile,
        "diverge": [rule_record(r) for r in scenario.diverge],
        "masks": [rule_record(r) for r in scenario.masks],
    }


def _value(value: Any) -> str:
    if type(value).__name__ == "_Absent":  # parity.checks.differences.ABSENT
        return "(absent)"
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS] + f"… ({len(text)} chars)"


def difference_record(d: Difference) -> dict[str, Any]:
    return {
        "category": d.category,
        "path": d.path,
        "ref_path": list(d.ref_path) if d.ref_path is not None else None,
        "other_path": list(d.other_path) if d.other_path is not None else None,
        "step": d.step,
        "step_kind": d.step_kind,
        "step_label": d.step_label,
        "detail": d.detail,
        "ref_value": _value(d.ref),
        "other_value": _value(d.other),
    }


def diff_record(report: ParityReport, against: str) -> dict[str, Any]:
    """One check's comparison: `against` is the reference target, or `snapshot`."""
    return {
        "against": against,
        "ref_name": report.ref_name,
        "other_name": report.other_name,
        "profile": report.profile,
        "count": len(report.differences),
        "categories": dict(Counter(d.category for d in report.differences)),
        "differences": [difference_record(d) for d in report.differences[:LIMIT]],
        "explained_count": len(report.suppressed),
        # Where each explained difference is (to mark it in the views) and which rule
        # explained it; its values and the rule's reason are left out (the scenario's
        # `diverge` list has the reasons, a peer can have hundreds of them).
        "explained": [
            {
                "category": d.category,
                "path": d.path,
                "ref_path": list(d.ref_path) if d.ref_path is not None else None,
                "other_path": list(d.other_path) if d.other_path is not None else None,
                "rule": rule.path,
            }
            for d, rule in report.suppressed[:LIMIT]
        ],
        "stale": [rule_record(r) for r in report.stale],
    }


def view_record(view: Any, source: str) -> dict[str, Any]:
    """A normalized view as the report shows it: its YAML (as in a snapshot) without
    the model requests, and those apart (`{"model": [...]}`), collapsed in the page."""
    from parity.view.dump import dump_view

    if not isinstance(view, dict):
        return {"source": source, "text": dump_view(view), "model": "", "requests": 0}
    main = {k: v for k, v in view.items() if k != "model"}
    model = view.get("model")
    return {
        "source": source,
        "text": dump_view(main),
        "model": dump_view({"model": model}) if model else "",
        "requests": len(model) if isinstance(model, list) else 0,
    }


def _join(*parts: str) -> str:
    return "\x1f".join(parts)


@dataclass
class Collected:
    """What the plugin gathers for the reports (one per process; see the module doc)."""

    keep_views: bool = False
    """Views are kept only for an HTML report (they can be large)."""
    scenarios: dict[str, dict[str, Any]] = field(default_factory=dict)
    diffs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """`scenario \\x1f kind \\x1f target` -> diff record."""
    views: dict[str, dict[str, Any]] = field(default_factory=dict)
    """`scenario \\x1f target` -> view record (a live run replaces a recording)."""
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    """node id -> item record (filled where reports arrive: the controller)."""

    def scenario(self, scenario: Scenario, targets: Sequence[str], root: Path) -> None:
        self.scenarios[scenario.name] = scenario_record(scenario, targets, root)

    def diff(
        self, scenario: str, kind: str, target: str, against: str, report: ParityReport
    ) -> None:
        self.diffs[_join(scenario, kind, target)] = diff_record(report, against)

    def view(self, scenario: str, target: str, view: Any, *, live: bool) -> None:
        if not self.keep_views or view is None:
            return
        key = _join(scenario, target)
        if live or key not in self.views:
            self.views[key] = view_record(view, "live" if live else "recorded")

    def item(self, report: Any, outcome: Outcome | None, invalid: bool) -> None:
        """One pytest report (setup or call) of a scenario item."""
        if outcome is None and not invalid:
            return
        file, _, name = report.nodeid.partition("::")
        rec = self.items.setdefault(
            report.nodeid,
            {"nodeid": report.nodeid, "file": file, "name": name, "duration": 0.0},
        )
        rec["duration"] = round(rec["duration"] + float(report.duration or 0.0), 6)
        if report.when == "call" or report.outcome != "passed" or "outcome" not in rec:
            rec["outcome"] = report.outcome
            rec["text"] = _report_text(report)
        if outcome is not None:
            rec.update(
                scenario=outcome.scenario,
                kind=outcome.kind,
                target=outcome.target,
                reference=outcome.reference,
                status=outcome.status,
                reason=outcome.reason,
            )
        elif invalid:
            rec.update(scenario=file, kind="validate", target="", reference="")
            rec.update(status="fail", reason="invalid scenario file")

    def to_output(self) -> dict[str, Any]:
        """For an xdist worker's `workeroutput` (plain data only)."""
        return {"scenarios": self.scenarios, "diffs": self.diffs, "views": self.views}

    def merge(self, output: Mapping[str, Any]) -> None:
        self.scenarios.update(output.get("scenarios", {}))
        self.diffs.update(output.get("diffs", {}))
        for key, rec in output.get("views", {}).items():
            if rec.get("source") == "live" or key not in self.views:
                self.views[key] = rec

    def diff_index(self) -> dict[matrix.DiffKey, dict[str, Any]]:
        """Diff records by (scenario, kind, target), as `parity.matrix` takes them."""
        out: dict[matrix.DiffKey, dict[str, Any]] = {}
        for key, rec in self.diffs.items():
            scenario, kind, target = key.split("\x1f")
            out[(scenario, kind, target)] = rec
        return out


def _report_text(report: Any) -> str:
    """A report's failure text, or a skip's reason."""
    if report.outcome == "passed":
        return ""
    longrepr = report.longrepr
    if report.outcome == "skipped" and isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    text = str(report.longreprtext)
    if text.startswith("[gw"):  # xdist's "[gw0] linux -- Python ..." line
        text = text.partition("\n")[2]
    return text


# -- the session's data ----------------------------------------------------------------


def _clause(reason: str, limit: int = 60) -> str:
    """The opening of a reason, up to its first parenthesis or colon."""
    cut = min((i for i in (reason.find(" ("), reason.find(": ")) if i > 0), default=len(reason))
    text = reason[:cut]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def own_cell(o: Outcome, diff: Mapping[str, Any] | None) -> dict[str, Any]:
    cats = matrix.categories(o, diff)
    if o.status == "skip":
        label = "skip: " + (
            _clause(o.reason) if o.reason.startswith("added") else f"{o.target} unavailable"
        )
    elif cats:
        label = f"{o.status}: {', '.join(cats)}"
    else:
        label = o.status
    return {"status": o.status, "reason": o.reason, "label": label, "categories": cats}


def parity_cell(o: Outcome, diff: Mapping[str, Any] | None) -> dict[str, Any]:
    cats = matrix.categories(o, diff)
    star = matrix.recorded(o)
    tail = " (recorded)" if star else ""
    if o.status == "pass":
        label = f"pass: same as {o.reference}{tail}"
    elif o.status == "differs":
        label = "differs: " + (", ".join(cats) if cats else f"from {o.reference}") + tail
    elif o.status == "skip":
        label = f"skip: {_clause(o.reason)}" if o.reason else "skip: not compared"
    else:
        label = "fail: " + (", ".join(cats) if cats else "check failed")
    return {
        "status": o.status,
        "reference": o.reference,
        "recorded": star,
        "reason": o.reason,
        "label": label,
        "categories": cats,
    }


def _rel(path: str, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path


def session_data(
    *,
    outcomes: Sequence[Outcome],
    collected: Collected,
    masked: Iterable[tuple[str, str, str, int, str]] = (),
    findings: Iterable[rpt.FindingsRow] = (),
    invalid: Iterable[str] = (),
    root: Path = Path("."),
    generated: str = "",
) -> dict[str, Any]:
    """Everything the reports show, as JSON-ready plain data (see the module doc)."""
    diffs = collected.diff_index()
    order = matrix.target_order(outcomes)
    names = sorted({o.scenario for o in outcomes})  # deselected scenarios are left out
    own = {(o.scenario, o.target): o for o in outcomes if o.kind == "target"}
    pairs = {(o.scenario, o.target): o for o in outcomes if o.kind == "parity"}
    masked_by: dict[str, list[dict[str, Any]]] = {}
    for scenario, target, path, count, reason in sorted(masked):
        rec = {"target": target, "path": path, "count": count, "reason": reason}
        masked_by.setdefault(scenario, []).append(rec)
    findings_by: dict[str, list[dict[str, Any]]] = {}
    for scenario, target, policy, found in sorted(findings, key=lambda r: (r[0], r[1])):
        if found:
            rec = {"target": target, "policy": policy, "findings": list(found)}
            findings_by.setdefault(scenario, []).append(rec)
    scenarios = []
    for name in names:
        meta = collected.scenarios.get(name) or {
            "name": name,
            "description": "",
            "file": "",
            "targets": [],
            "reference": "",
            "compare": "",
            "profile": "",
            "diverge": [],
            "masks": [],
        }
        seen = {o.target for o in outcomes if o.scenario == name}
        targets = [*meta["targets"], *(t for t in order if t in seen and t not in meta["targets"])]
        cells = []
        for t in targets:
            o, p = own.get((name, t)), pairs.get((name, t))
            cells.append(
                {
                    "target": t,
                    "own": own_cell(o, diffs.get(matrix.item_key(o))) if o else None,
                    "parity": parity_cell(p, diffs.get(matrix.item_key(p))) if p else None,
                }
            )
        scenario_diffs = [
            {"kind": kind, "target": target, **rec}
            for (s, kind, target), rec in sorted(diffs.items())
            if s == name
        ]
        views = {
            t: collected.views[_join(name, t)] for t in targets if _join(name, t) in collected.views
        }
        scenarios.append(
            {
                **meta,
                "targets": targets,
                "cells": cells,
                "diffs": scenario_diffs,
                "masked": masked_by.get(name, []),
                "findings": findings_by.get(name, []),
                "views": views,
            }
        )
    groups = matrix.difference_groups(outcomes, diffs)
    items = sorted(
        collected.items.values(),
        key=lambda r: (r.get("scenario", ""), r.get("kind") != "target", r["name"]),
    )
    return {
        "format": FORMAT,
        "generated": generated,
        "targets": order,
        "reference": order[0] if any(o.kind == "parity" for o in outcomes) else "",
        "counts": dict(Counter(o.status for o in outcomes)),
        "counts_line": rpt.counts_line(outcomes),
        "notes": rpt.parity_notes(outcomes) if outcomes else [],
        "scenarios": scenarios,
        "groups": [
            {
                "kind": g.kind,
                "target": g.target,
                "against": g.against,
                "scenarios": list(g.scenarios),
                "differences": [list(d) for d in g.differences],
                "count": g.count,
                "text": matrix.group_text(g),
            }
            for g in groups
        ],
        "items": items,
        "invalid": sorted(_rel(p, root) for p in invalid),
    }


def to_json(data: Mapping[str, Any]) -> str:
    """The session data as JSON for CI, without the views (`--parity-report` has them)."""
    lean = {
        **data,
        "scenarios": [
            {k: v for k, v in s.items() if k != "views"} for s in data.get("scenarios", [])
        ],
    }
    return json.dumps(lean, indent=2, ensure_ascii=False) + "\n"


def now() -> str:
    """The report's timestamp: UTC, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def write_outputs(
    data: Mapping[str, Any],
    *,
    report: Path | None = None,
    junit: Path | None = None,
    json_path: Path | None = None,
    relative_to: Path | None = None,
) -> list[str]:
    """Write the HTML report directory, the JUnit XML and the JSON that were asked for;
    one summary line per file written."""
    from parity.html_report import write_report
    from parity.junit import render_junit

    lines = []

    def shown(path: Path) -> str:
        if relative_to is not None and path.resolve().is_relative_to(relative_to.resolve()):
            return os.path.relpath(path, relative_to)
        return str(path)

    if report is not None:
        lines.append(f"parity report: {shown(write_report(report, data))}")
    for path, text, what in ((junit, render_junit, "JUnit XML"), (json_path, to_json, "JSON")):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text(data), encoding="utf-8")
            lines.append(f"parity {what}: {shown(path)}")
    return lines

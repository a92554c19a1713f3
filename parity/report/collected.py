"""What the pytest plugin gathers while items run, as plain data for the reports.

The plugin feeds a `Collected`: each scenario's declared facts (`scenario_record`:
description, targets, `diverge` rules, masks), each check's diff record (`diff_record`:
category and path of every difference, the ones `diverge` rules explained, stale rules)
and, when an HTML report was asked for, each target's normalized view (`view_record`).
Under pytest-xdist every worker fills its own and hands it to the controller at the end
(`to_output` / `merge`), as the plugin does with the scenarios it collected; the
controller adds one record per item report (`item`). `parity.report.results` joins it
with the outcomes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from parity.checks.diff_text import fact_groups, request_index
from parity.report.matrix import DiffKey
from parity.report.outcome import Outcome
from parity.view.dump import dump_view

if TYPE_CHECKING:
    from parity.checks.diff import ParityReport
    from parity.checks.differences import Difference
    from parity.scenario.model import Rule, Scenario

LIMIT = 200
"""Differences (and explained ones) kept per check; the rest are counted."""
VALUE_CHARS = 200
"""Characters of a differing value kept in a diff record."""


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


def fact_record(group: Sequence[Difference]) -> dict[str, Any]:
    """One fact (`parity.checks.diff_text.fact_groups`): its first occurrence, the later
    model requests it recurs in (`again_in`), and where each repeat is in both views
    (`again`, so the HTML report marks those lines too)."""
    first, repeats = group[0], group[1:]
    return {
        **difference_record(first),
        "again_in": [request_index(d) for d in repeats],
        "again": [
            {
                "ref_path": list(d.ref_path) if d.ref_path is not None else None,
                "other_path": list(d.other_path) if d.other_path is not None else None,
            }
            for d in repeats
        ],
    }


def diff_record(report: ParityReport, against: str) -> dict[str, Any]:
    """One check's comparison: `against` is the reference target, or `snapshot`. Its
    `differences` are facts, grouped as the text report groups them: a history
    difference that every later model request repeats is one record (`fact_record`);
    `count` counts every place, `facts` the records."""
    groups = fact_groups(report.differences)
    return {
        "against": against,
        "ref_name": report.ref_name,
        "other_name": report.other_name,
        "profile": report.profile,
        "count": len(report.differences),
        "facts": len(groups),
        "categories": dict(Counter(d.category for d in report.differences)),
        "differences": [fact_record(group) for group in groups[:LIMIT]],
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


@dataclass(frozen=True)
class ViewRecord:
    """A normalized view as the report shows it: its YAML (as in a snapshot) without the
    model requests, and those apart (`{"model": [...]}`), collapsed in the page."""

    source: str
    """`live` (this session's run) or `recorded` (its snapshot stood in)."""
    text: str
    model: str = ""
    requests: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "text": self.text,
            "model": self.model,
            "requests": self.requests,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ViewRecord:
        return cls(
            str(data["source"]),
            str(data["text"]),
            str(data.get("model", "")),
            int(data.get("requests", 0)),
        )


@dataclass(frozen=True)
class DriftRecord:
    """A target's snapshot differs: its recorded text and this run's (exact bytes)."""

    recorded: str
    live: str

    def to_dict(self) -> dict[str, str]:
        return {"recorded": self.recorded, "live": self.live}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DriftRecord:
        return cls(str(data["recorded"]), str(data["live"]))


def view_record(view: Any, source: str) -> ViewRecord:
    """A normalized view as the report shows it (`ViewRecord`)."""
    if not isinstance(view, dict):
        return ViewRecord(source, dump_view(view))
    main = {k: v for k, v in view.items() if k != "model"}
    model = view.get("model")
    return ViewRecord(
        source,
        dump_view(main),
        dump_view({"model": model}) if model else "",
        len(model) if isinstance(model, list) else 0,
    )


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
    views: dict[str, ViewRecord] = field(default_factory=dict)
    """`scenario \\x1f target` -> view record (a live run replaces a recording)."""
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    """node id -> item record (filled where reports arrive: the controller)."""
    drifts: dict[str, DriftRecord] = field(default_factory=dict)
    """`scenario \\x1f target` -> `DriftRecord`: a drifted snapshot's
    two texts (HTML report only). The views hold one view per target, the one the
    parity checks compared (the live run); the drift is this target's own recording
    against that run, so its recorded text has to travel separately."""

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

    def drift(self, scenario: str, target: str, recorded: str, live: str) -> None:
        """A target's snapshot differs: its recorded text and this run's (exact bytes)."""
        if self.keep_views:
            self.drifts[_join(scenario, target)] = DriftRecord(recorded, live)

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
        return {
            "scenarios": self.scenarios,
            "diffs": self.diffs,
            "views": {k: v.to_dict() for k, v in self.views.items()},
            "drifts": {k: d.to_dict() for k, d in self.drifts.items()},
        }

    def to_dict(self) -> dict[str, Any]:
        """All of it, item records too (a shard's ledger; `merge` reads it back)."""
        return {**self.to_output(), "items": self.items}

    def merge(self, output: Mapping[str, Any]) -> None:
        self.items.update(output.get("items", {}))
        self.scenarios.update(output.get("scenarios", {}))
        self.diffs.update(output.get("diffs", {}))
        for key, drift in output.get("drifts", {}).items():
            self.drifts[key] = DriftRecord.from_dict(drift)
        for key, rec in output.get("views", {}).items():
            if rec.get("source") == "live" or key not in self.views:
                self.views[key] = ViewRecord.from_dict(rec)

    def view_for(self, scenario: str, target: str) -> ViewRecord | None:
        """The view record of `target` running `scenario`, if one was kept."""
        return self.views.get(_join(scenario, target))

    def drift_for(self, scenario: str, target: str) -> DriftRecord | None:
        """The recorded and live texts of `target`'s drifted snapshot, if kept."""
        return self.drifts.get(_join(scenario, target))

    def diff_index(self) -> dict[DiffKey, dict[str, Any]]:
        """Diff records by (scenario, kind, target), as `parity.report.matrix` takes them."""
        out: dict[DiffKey, dict[str, Any]] = {}
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

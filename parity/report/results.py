"""A parity session's results as plain data, for the reports.

`session_data` joins what the plugin collected (`parity.report.collected.Collected`) with
the outcomes into one JSON-ready mapping: the summary matrix (`parity.report.matrix`),
per scenario its cells, diff records, masks, findings and views, the groups of identical
changes (`parity.report.groups`), one record per item. The writers are pure functions
of it: `parity.report.html.render_report`, `parity.report.junit.render_junit`,
`to_json`. Nothing here imports the harness (driver, diff, fake LLM): the diff records
are made from the reports the items already have.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from parity.report import matrix
from parity.report.collected import Collected
from parity.report.groups import difference_groups, group_text
from parity.report.ledger import SessionLedger
from parity.report.outcome import Outcome
from parity.report.rows import FindingsRow, MaskedRow
from parity.report.text import counts_line, parity_notes

FORMAT = "acp-parity-results/1"


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
    masked: Iterable[MaskedRow] = (),
    findings: Iterable[FindingsRow] = (),
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
    for m in sorted(masked):
        rec = {"target": m.target, "path": m.path, "count": m.count, "reason": m.reason}
        masked_by.setdefault(m.scenario, []).append(rec)
    findings_by: dict[str, list[dict[str, Any]]] = {}
    for f in sorted(findings, key=lambda r: (r.scenario, r.target)):
        if f.findings:
            rec = {"target": f.target, "policy": f.policy, "findings": list(f.findings)}
            findings_by.setdefault(f.scenario, []).append(rec)
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
        views = {t: v.to_dict() for t in targets if (v := collected.view_for(name, t)) is not None}
        drifts = {
            t: d.to_dict() for t in targets if (d := collected.drift_for(name, t)) is not None
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
                "drifts": drifts,
            }
        )
    groups = difference_groups(outcomes, diffs)
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
        "counts_line": counts_line(outcomes),
        "notes": parity_notes(outcomes) if outcomes else [],
        "scenarios": scenarios,
        "groups": [
            {
                "kind": g.kind,
                "target": g.target,
                "against": g.against,
                "scenarios": list(g.scenarios),
                "differences": [list(d) for d in g.differences],
                "count": g.count,
                "text": group_text(g),
            }
            for g in groups
        ],
        "items": items,
        "invalid": sorted(_rel(p, root) for p in invalid),
    }


def ledger_data(ledger: SessionLedger, root: Path, generated: str) -> dict[str, Any]:
    """A ledger's session data (`session_data`): what every report file is made of."""
    return session_data(
        outcomes=ledger.outcomes,
        collected=ledger.collected,
        masked=ledger.masked,
        findings=ledger.findings,
        invalid=ledger.invalid,
        root=root,
        generated=generated,
    )


def to_json(data: Mapping[str, Any]) -> str:
    """The session data as JSON for CI, without the views and drifted snapshots' texts
    (`--parity-report` has them)."""
    lean = {
        **data,
        "scenarios": [
            {k: v for k, v in s.items() if k not in ("views", "drifts")}
            for s in data.get("scenarios", [])
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
    from parity.report.html import write_report
    from parity.report.junit import render_junit

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
            # A lone surrogate an agent sent, should one reach a file unescaped, is
            # written as its JSON escape (`\ud83d`) rather than failing the write.
            path.write_text(text(data), encoding="utf-8", errors="backslashreplace")
            lines.append(f"parity {what}: {shown(path)}")
    return lines

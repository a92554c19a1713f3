"""A static, self-contained HTML report of a parity session.

`render_report(data)` turns the session data (`parity.report.results.session_data`) into pages,
`{relative path: html}`; `write_report` writes them. Pure and offline: inline CSS, no
script, no external resource, and a Content-Security-Policy that forbids scripts, so a
page is safe to open even if some agent text slipped through unescaped (it does not:
every value is escaped, and control characters are shown as `\\xNN`).

- `index.html`: the summary matrix (scenario x target; each cell the target's own check
  and its parity check with the failure category), the groups of identical changes, the
  parity notes.
- `scenarios/<name>.html`, one per scenario: the results, every difference (category,
  path, step, both values, links to the lines), the declared `diverge` rules and masks
  with what each explained or masked, the targets' normalized views side by side with
  the lines of each difference highlighted (found from the differences' paths in each
  view's YAML, not by comparing text), the model view collapsed in a `<details>`, then
  failure output and conformance findings.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from parity.report.html_page import cell_status, esc, page
from parity.report.html_scenario import scenario_page


def page_paths(names: Sequence[str]) -> dict[str, str]:
    """Each scenario's page, `scenarios/<name with / as __>.html`, unique."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        slug = re.sub(r"[^A-Za-z0-9._-]", "_", name.replace("/", "__")) or "scenario"
        candidate, n = slug, 1
        while candidate.lower() in used:
            n += 1
            candidate = f"{slug}-{n}"
        used.add(candidate.lower())
        out[name] = f"scenarios/{candidate}.html"
    return out


def render_report(data: Mapping[str, Any]) -> dict[str, str]:
    """The report's pages: `index.html` and one page per scenario (see the module doc)."""
    scenarios = list(data.get("scenarios", []))
    paths = page_paths([s["name"] for s in scenarios])
    pages = {"index.html": _index(data, paths)}
    for s in scenarios:
        pages[paths[s["name"]]] = scenario_page(s, data)
    return pages


def write_report(directory: Path, data: Mapping[str, Any]) -> Path:
    """Write the report's pages below `directory`; returns its index.html."""
    for rel, text in render_report(data).items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return directory / "index.html"


ATTENTION = ("failure", "drift", "stale")
"""What the index leads with, in this order: checks that failed, snapshots that
drifted (the agent changed; review, then `parity record`), and stale expected
differences (a `diverge` rule or `expect_problems` entry that no longer matches)."""

_STALE_ONLY = ({"stale diverge"}, {"stale expect_problems"})

ATTENTION_OPEN = 12
"""Entries of the attention list shown open; the rest fold into a `<details>`."""

MANY_TARGETS = 8
"""Above this many targets the matrix turns compact: each cell its status word and a
parity symbol, the target names rotated (so a column never needs the name's width)."""


def attention_kind(cell: Mapping[str, Any], part: str) -> str | None:
    """Which `ATTENTION` kind one check of a matrix cell (`own` or `parity`) is, or
    None when it needs nothing."""
    check = cell.get(part)
    if not check or check["status"] not in ("fail", "differs"):
        return None
    if set(check["categories"]) in _STALE_ONLY:
        return "stale"
    # Only a snapshot that differs and nothing else is drift: with run problems or
    # findings the run itself is broken, and that is the failure to read first.
    if part == "own" and check["reason"] == "snapshot differs":
        return "drift"
    return "failure"


def attention(data: Mapping[str, Any], paths: Mapping[str, str]) -> list[dict[str, str]]:
    """Every check that needs a person, most urgent kind first (`ATTENTION`), then by
    scenario: kind, scenario, target, what to read (the cell's label) and a link."""
    out = []
    for s in data.get("scenarios", []):
        for c in s["cells"]:
            for part in ("own", "parity"):
                kind = attention_kind(c, part)
                if kind is None:
                    continue
                i = s["targets"].index(c["target"])
                drift = kind == "drift" and c["target"] in s.get("drifts", {})
                anchor = f"drift-{i}" if drift else f"target-{i}"
                out.append(
                    {
                        "kind": kind,
                        "scenario": s["name"],
                        "target": c["target"],
                        "label": c[part]["label"],
                        "href": f"{paths[s['name']]}#{anchor}",
                    }
                )
    for p in data.get("invalid", []):  # not run, so no page: named, not linked
        out.append(
            {"kind": "failure", "scenario": p, "target": "", "label": "invalid file", "href": ""}
        )
    rank = {k: i for i, k in enumerate(ATTENTION)}
    return sorted(out, key=lambda e: rank[e["kind"]])  # stable: scenarios stay sorted


def _cell_title(cell: Mapping[str, Any]) -> str:
    out = []
    for what, part in (("snapshot", cell.get("own")), ("parity", cell.get("parity"))):
        if part:
            out.append(
                f"{what}: {part['status']}" + (f" ({part['reason']})" if part["reason"] else "")
            )
    return "\n".join(out)


def _compact(part: Mapping[str, Any], kind: str) -> str:
    """A check in a compact cell: its status word, or a symbol for a parity check
    (the key above the matrix explains them)."""
    if kind == "own":
        return str(part["status"])
    symbol = {"pass": "=", "differs": "~", "fail": "!", "skip": "?"}.get(part["status"], "?")
    return symbol + ("*" if part.get("recorded") else "")


def _cell_html(cell: Mapping[str, Any], href: str, compact: bool) -> str:
    status = cell_status(cell)
    lines = [
        f'<span class="line st-{esc(part["status"])}">'
        f"{esc(_compact(part, kind) if compact else part['label'])}</span>"
        for kind in ("own", "parity")
        if (part := cell.get(kind))
    ]
    if not lines:
        return '<td class="cell st-none"><span class="none">-</span></td>'
    return (
        f'<td class="cell cell-{esc(status)}" title="{esc(_cell_title(cell))}">'
        f'<a href="{esc(href)}">{"".join(lines)}</a></td>'
    )


_HEADLINES = {
    "failure": "failed",
    "drift": "snapshot drifted (this target's recording beside its live run)",
    "stale": "stale expected difference",
}


def _attention_html(entries: Sequence[Mapping[str, str]], data: Mapping[str, Any]) -> str:
    if not entries:
        return (
            '<section class="attention clear" id="attention"><h2>Nothing needs attention</h2>'
            f"<p>{esc(data.get('counts_line', ''))}</p></section>"
        )
    counts = Counter(e["kind"] for e in entries)
    said = ", ".join(f"{counts[k]} {k}" for k in ATTENTION if counts[k])
    items = []
    for n, e in enumerate(entries, start=1):
        where = f"{e['scenario']} · {e['target']}" if e["target"] else e["scenario"]
        link = f'<a href="{esc(e["href"])}">{esc(where)}</a>' if e["href"] else esc(where)
        items.append(
            f'<li class="attn-{esc(e["kind"])}" id="attn-{n}">'
            f'<span class="tag bad">{esc(_HEADLINES[e["kind"]])}</span> {link}: '
            f'<span class="mono">{esc(e["label"])}</span></li>'
        )
    # A change that breaks every scenario lists them all; past the first few the list
    # is folded, so the matrix below still starts on the first screen.
    rest = ""
    if len(items) > ATTENTION_OPEN:
        rest = (
            f"<details><summary>{len(items) - ATTENTION_OPEN} more</summary>"
            f'<ol start="{ATTENTION_OPEN + 1}">{"".join(items[ATTENTION_OPEN:])}</ol></details>'
        )
    return (
        '<section class="attention" id="attention">'
        f"<h2>{len(entries)} check(s) need attention: {esc(said)}</h2>"
        f"<ol>{''.join(items[:ATTENTION_OPEN])}</ol>{rest}</section>"
    )


def _index(data: Mapping[str, Any], paths: Mapping[str, str]) -> str:
    targets: list[str] = list(data.get("targets", []))
    reference = data.get("reference", "")
    compact = len(targets) > MANY_TARGETS
    head = "".join(
        f'<th class="t">{esc(t)}'
        + ('<br><span class="muted">reference</span>' if t == reference else "")
        + "</th>"
        for t in targets
    )
    entries = attention(data, paths)
    # Rows that need attention first (in the order of the list above), then the rest
    # by name: with 60 scenarios the red row is then on the first screen too.
    first = list(dict.fromkeys(e["scenario"] for e in entries))
    scenarios = sorted(
        data.get("scenarios", []),
        key=lambda s: first.index(s["name"]) if s["name"] in first else len(first),
    )
    rows = []
    for s in scenarios:
        cells = {c["target"]: c for c in s["cells"]}
        href = paths[s["name"]]
        tds = []
        for t in targets:
            if t in cells:
                link = f"{href}#target-{s['targets'].index(t)}"
                tds.append(_cell_html(cells[t], link, compact))
            else:
                tds.append('<td class="cell st-none"><span class="none">-</span></td>')
        rows.append(f'<tr><th><a href="{esc(href)}">{esc(s["name"])}</a></th>{"".join(tds)}</tr>')
    key = (
        "Each cell: the target's own snapshot check (pass, new, skip, fail), then its "
        "parity check against the scenario's reference: = same, ~ differs, ! failed, "
        "? not compared, * against a recording. Hover a cell for the reasons."
        if compact
        else "Each cell: the target's own snapshot check, then its parity check against "
        "the scenario's reference (first) target. Rows that need attention come first."
    )
    body = [
        "<h1>parity report</h1>",
        f'<p class="muted">{esc(data.get("counts_line", ""))}'
        + (f" · generated {esc(data['generated'])}" if data.get("generated") else "")
        + "</p>",
        _attention_html(entries, data),
        "<h2>Summary</h2>",
        f'<p class="key muted">{esc(key)}</p>',
        f'<table class="matrix{" many" if compact else ""}"><colgroup><col class="name">'
        f"</colgroup><thead><tr><th>scenario</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>",
    ]
    groups = data.get("groups", [])
    if groups:
        body.append("<h2>Differences, grouped</h2><ul>")
        for g in groups:
            links = ", ".join(
                f'<a href="{esc(paths[n])}">{esc(n)}</a>' if n in paths else esc(n)
                for n in g["scenarios"]
            )
            where = (
                f"same change in {len(g['scenarios'])} scenarios"
                if len(g["scenarios"]) > 1
                else "in 1 scenario"
            )
            body.append(
                f"<li><b>{esc(g['target'])} vs {esc(g['against'])}</b>, {esc(where)}: "
                f'<span class="mono">{esc(g["text"])}</span><br>{links}</li>'
            )
        body.append("</ul>")
    notes = data.get("notes", [])
    if notes:
        body.append('<h2>Notes</h2><pre class="text">' + esc("\n".join(notes)) + "</pre>")
    invalid = data.get("invalid", [])
    if invalid:
        body.append("<h2>Invalid scenario files (not run)</h2><ul>")
        body += [f'<li class="mono">{esc(p)}</li>' for p in invalid]
        body.append("</ul>")
    return page("parity report", "\n".join(body))

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


def _cell_title(cell: Mapping[str, Any]) -> str:
    out = []
    for what, part in (("snapshot", cell.get("own")), ("parity", cell.get("parity"))):
        if part:
            out.append(
                f"{what}: {part['status']}" + (f" ({part['reason']})" if part["reason"] else "")
            )
    return "\n".join(out)


def _cell_html(cell: Mapping[str, Any], href: str) -> str:
    status = cell_status(cell)
    lines = [
        f'<span class="line st-{esc(part["status"])}">{esc(part["label"])}</span>'
        for part in (cell.get("own"), cell.get("parity"))
        if part
    ]
    if not lines:
        return '<td class="cell st-none"><span class="none">-</span></td>'
    return (
        f'<td class="cell cell-{esc(status)}" title="{esc(_cell_title(cell))}">'
        f'<a href="{esc(href)}">{"".join(lines)}</a></td>'
    )


def _index(data: Mapping[str, Any], paths: Mapping[str, str]) -> str:
    targets: list[str] = list(data.get("targets", []))
    reference = data.get("reference", "")
    head = "".join(
        f"<th>{esc(t)}"
        + ('<br><span class="muted">reference</span>' if t == reference else "")
        + "</th>"
        for t in targets
    )
    rows = []
    for s in data.get("scenarios", []):
        cells = {c["target"]: c for c in s["cells"]}
        href = paths[s["name"]]
        tds = []
        for t in targets:
            if t in cells:
                tds.append(_cell_html(cells[t], f"{href}#target-{s['targets'].index(t)}"))
            else:
                tds.append('<td class="cell st-none"><span class="none">-</span></td>')
        rows.append(f'<tr><th><a href="{esc(href)}">{esc(s["name"])}</a></th>{"".join(tds)}</tr>')
    body = [
        "<h1>parity report</h1>",
        f'<p class="muted">{esc(data.get("counts_line", ""))}'
        + (f" · generated {esc(data['generated'])}" if data.get("generated") else "")
        + "</p>",
        "<h2>Summary</h2>",
        '<p class="key muted">Each cell: the target\'s own snapshot check, then its parity '
        "check against the scenario's reference (first) target.</p>",
        f'<table class="matrix"><thead><tr><th>scenario</th>{head}</tr></thead>'
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

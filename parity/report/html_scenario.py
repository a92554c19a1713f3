"""One scenario's page of the HTML report: results, differences, expected differences,
the normalized views side by side with each difference's lines highlighted, failure
output and conformance findings (see `parity.report.html`). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from parity.checks.diff_text import again_in
from parity.report.html_page import cell_status, esc, page
from parity.report.html_sbs import side_by_side

PathT = tuple[str | int, ...]

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def line_spans(text: str) -> dict[PathT, tuple[int, int]]:
    """First and last line (0-based) of every node of a YAML document, by its path
    (a mapping entry from its key's line on)."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError:
        return {}
    spans: dict[PathT, tuple[int, int]] = {}
    if root is not None:
        _walk(root, (), root.start_mark.line, spans)
    return spans


def _walk(node: Node, path: PathT, first: int, spans: dict[PathT, tuple[int, int]]) -> int:
    if isinstance(node, MappingNode | SequenceNode) and node.value:
        last = node.start_mark.line
    else:
        end = node.end_mark
        last = end.line - 1 if end.column == 0 and end.line > node.start_mark.line else end.line
    if isinstance(node, MappingNode):
        for key, value in node.value:
            name = key.value if isinstance(key, ScalarNode) else str(key.start_mark)
            last = max(last, _walk(value, (*path, name), key.start_mark.line, spans))
    elif isinstance(node, SequenceNode):
        for i, value in enumerate(node.value):
            last = max(last, _walk(value, (*path, i), value.start_mark.line, spans))
    spans[path] = (first, last)
    return last


class _Marks:
    """Highlighted lines of one target's view: line -> (class, notes), per block."""

    def __init__(self, record: Mapping[str, Any] | None) -> None:
        self.record = record
        self.spans = {
            "L": line_spans(record["text"]) if record else {},
            "M": line_spans(record["model"]) if record and record.get("model") else {},
        }
        self.lines: dict[str, dict[int, tuple[str, list[str]]]] = {"L": {}, "M": {}}

    def mark(self, path: Sequence[str | int] | None, cls: str, note: str) -> str | None:
        """Highlight the lines of `path`; the anchor of its first line, or None."""
        if path is None or self.record is None:
            return None
        block = "M" if path and path[0] == "model" else "L"
        span = self.spans[block].get(tuple(path))
        if span is None:
            return None
        for n in range(span[0], span[1] + 1):
            old_cls, notes = self.lines[block].get(n, (cls, []))
            # An unexplained difference outranks an explained one on a shared line.
            self.lines[block][n] = ("hl" if "hl" in (old_cls, cls) else cls, [*notes, note])
        return f"{block}{span[0] + 1}"


def _view_lines(text: str, prefix: str, marks: Mapping[int, tuple[str, list[str]]]) -> str:
    out = []
    for n, line in enumerate(text.splitlines()):
        mark = marks.get(n)
        cls = f"ln {mark[0]}" if mark else "ln"
        title = f' title="{esc("; ".join(dict.fromkeys(mark[1])))}"' if mark else ""
        out.append(
            f'<span class="{cls}" id="{prefix}{n + 1}"{title}><span class="no">{n + 1}</span>'
            f"{esc(line)}</span>"
        )
    return "".join(out)


def _link(
    sides: Sequence[tuple[str, str, _Marks, int]], d: Mapping[str, Any], cls: str, note: str
) -> str:
    """Highlight a difference in each side's view (`ref_path` in the reference's, or
    the snapshot's, `other_path` in the target's); links to the first lines."""
    out = []
    for target, key, marks, i in sides:
        anchor = marks.mark(d.get(key), cls, note)
        if anchor:
            line = anchor[1:] if anchor[0] == "L" else f"model {anchor[1:]}"
            out.append(f'<a href="#v{i}-{anchor}">{esc(target)}:{line}</a>')
    return " ".join(out)


def _code(lines: str) -> str:
    return f'<div class="code mono">{lines}</div>'


def _none(text: str) -> str:
    return f'<p class="muted" style="padding:0 10px">{esc(text)}</p>'


def _rule_targets(rule: Mapping[str, Any]) -> str:
    return ", ".join(rule["targets"]) if rule.get("targets") else "all targets"


def scenario_page(s: Mapping[str, Any], data: Mapping[str, Any]) -> str:
    targets: list[str] = list(s["targets"])
    index = {t: i for i, t in enumerate(targets)}
    views: Mapping[str, Any] = s.get("views", {})
    marks = {t: _Marks(views.get(t)) for t in targets}
    body = [
        '<p><a href="../index.html">&larr; all scenarios</a></p>',
        f"<h1>{esc(s['name'])}</h1>",
    ]
    if s.get("description"):
        body.append(f"<p>{esc(s['description'])}</p>")
    facts = [f'<span class="mono">{esc(s["file"])}</span>'] if s.get("file") else []
    if s.get("reference"):
        facts.append(f"reference: <b>{esc(s['reference'])}</b>")
    if s.get("profile"):
        facts.append(f"profile: {esc(s['profile'])}")
    body.append(f'<p class="muted">{" · ".join(facts)}</p>')

    # Drift first, above the results: it is what needs a person on this page. The
    # target's own recording beside this run, aligned, only the changed regions open;
    # the views further down are the ones the parity checks compared (the reference
    # beside the target), which is not what drifted.
    drifts: Mapping[str, Any] = s.get("drifts", {})
    for t in targets:
        if t in drifts:
            body.append(
                f'<h2 id="drift-{index[t]}">Snapshot drift: {esc(t)}</h2>'
                f'<p class="muted">{esc(t)}\'s recorded snapshot (left) beside its live run '
                "(right), line by line; review it, then <code>parity record</code> if the "
                "change is intended.</p>"
                + side_by_side(
                    drifts[t]["recorded"],
                    drifts[t]["live"],
                    f"{t}: recorded snapshot",
                    f"{t}: live run",
                )
            )

    # Results.
    body.append("<h2>Results</h2><table><thead><tr><th>target</th><th>snapshot check</th>")
    body.append("<th>parity check</th></tr></thead><tbody>")
    for c in s["cells"]:
        status = cell_status(c)
        parts = []
        for part in (c.get("own"), c.get("parity")):
            if part is None:
                parts.append('<td class="st-none">-</td>')
                continue
            reason = (
                f'<br><span class="muted">{esc(part["reason"])}</span>' if part["reason"] else ""
            )
            parts.append(f'<td class="st-{esc(part["status"])}">{esc(part["label"])}{reason}</td>')
        body.append(
            f'<tr id="target-{index.get(c["target"], 0)}" class="st-{esc(status)}">'
            f"<th>{esc(c['target'])}</th>{''.join(parts)}</tr>"
        )
    body.append("</tbody></table>")

    # Differences (highlighting the views on the way).
    diff_html: list[str] = []
    explained: dict[str, dict[str, int]] = {}
    """diverge rule path -> target compared -> differences it explained."""
    for rec in s.get("diffs", []):
        other, kind = rec["target"], rec["kind"]
        ref = rec["against"] if kind == "parity" else ""
        title = f"{other} vs {ref} (reference)" if kind == "parity" else f"{other} vs its snapshot"
        sides = [(ref, "ref_path"), (other, "other_path")] if ref else [(other, "other_path")]
        pairs = [(t, key, marks[t], index[t]) for t, key in sides if t in marks]
        for d in rec.get("explained", []):
            _link(pairs, d, "ex", f"expected ({d['rule']}): {d['category']} at {d['path']}")
            per = explained.setdefault(d["rule"], {})
            per[other] = per.get(other, 0) + 1
        if not rec["count"] and not rec.get("stale"):
            continue
        vs = f"vs {ref}" if ref else "vs its snapshot"
        rows = []
        for i, d in enumerate(rec.get("differences", []), start=1):
            note = f"{d['category']} at {d['path']} ({other} {vs})"
            where = _link(pairs, d, "hl", note)
            # A history difference is one fact (`collected.fact_record`): one row, its
            # repeats in later model requests named, and their lines marked too.
            for again in d.get("again", []):
                _link(pairs, again, "hl", note)
            step = f"{d['step']} {d['step_kind']}: {d['step_label']}" if d.get("step") else "-"
            detail = d.get("detail")
            extra = f'<br><span class="muted">{esc(detail)}</span>' if detail else ""
            recurs = again_in(d.get("again_in", [])).strip()
            recurs_html = f'<br><span class="muted">{esc(recurs)}</span>' if recurs else ""
            rows.append(
                f"<tr><td>{i}</td><td>{esc(d['category'])}{extra}</td>"
                f'<td class="mono">{esc(d["path"])}{recurs_html}</td><td>{esc(step)}</td>'
                f'<td class="val mono">{esc(d["ref_value"])}</td>'
                f'<td class="val mono">{esc(d["other_value"])}</td><td>{where}</td></tr>'
            )
        left = f"{ref} (reference)" if ref else "its snapshot"
        facts = rec.get("facts", rec["count"])
        distinct = f" ({facts} distinct)" if facts < rec["count"] else ""
        diff_html.append(
            f"<h3>{esc(title)}: {rec['count']} difference(s){distinct}</h3>"
            '<table class="diff-table"><thead><tr><th>#</th><th>category</th><th>path</th>'
            f"<th>step</th><th>{esc(left)}</th>"
            f"<th>{esc(rec['other_name'])}</th><th>lines</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
        shown = len(rec.get("differences", []))
        if facts > shown:
            diff_html.append(f'<p class="muted">… and {facts - shown} more</p>')
        for rule in rec.get("stale", []):
            diff_html.append(
                '<p><span class="tag bad">stale diverge rule</span> '
                f'<span class="mono">{esc(rule["path"])}</span> ({esc(rule["reason"])}) '
                "matched no difference</p>"
            )
    body.append("<h2>Differences</h2>")
    body += diff_html or ['<p class="muted">No check found a difference.</p>']

    # Expected differences: diverge rules and masks.
    body.append("<h2>Expected differences</h2>")
    stale = {r["path"] for rec in s.get("diffs", []) for r in rec.get("stale", [])}
    if s.get("diverge"):
        body.append("<h3>diverge rules</h3><table><thead><tr><th>path</th><th>targets</th>")
        body.append("<th>reason</th><th>explained</th></tr></thead><tbody>")
        for rule in s["diverge"]:
            counts = explained.get(rule["path"], {})
            if counts:
                said = "<br>".join(f"{n} in {esc(t)}" for t, n in sorted(counts.items()))
            elif rule["path"] in stale:
                said = '<span class="tag bad">stale: matched nothing</span>'
            else:
                said = '<span class="muted">nothing this run</span>'
            body.append(
                f'<tr><td class="mono">{esc(rule["path"])}</td><td>{esc(_rule_targets(rule))}</td>'
                f'<td>{esc(rule["reason"])}</td><td class="count">{said}</td></tr>'
            )
        body.append("</tbody></table>")
    else:
        body.append('<p class="muted">No diverge rules.</p>')
    if s.get("masks"):
        masked: dict[str, list[str]] = {}
        for m in s.get("masked", []):
            what = f"{m['count']} in {m['target']}" if m["count"] else f"none in {m['target']}"
            masked.setdefault(m["path"], []).append(what)
        body.append("<h3>masks</h3><table><thead><tr><th>path</th><th>targets</th>")
        body.append("<th>reason</th><th>values masked</th></tr></thead><tbody>")
        for rule in s["masks"]:
            said = ", ".join(masked.get(rule["path"], [])) or "-"
            body.append(
                f'<tr><td class="mono">{esc(rule["path"])}</td><td>{esc(_rule_targets(rule))}</td>'
                f"<td>{esc(rule['reason'])}</td><td>{esc(said)}</td></tr>"
            )
        body.append("</tbody></table>")
    else:
        body.append('<p class="muted">No masks.</p>')

    # The views, side by side; the model requests collapsed below them.
    body.append("<h2>Normalized views</h2>")
    body.append(
        '<p class="key"><span class="ln hl">differs</span>'
        '<span class="ln ex">expected (diverge)</span></p>'
    )
    main, model = [], []
    for t in targets:
        rec, i = views.get(t), index[t]
        source = {"live": "live run", "recorded": "recorded snapshot"}.get(
            rec["source"] if rec else "", ""
        )
        head = f'<h3>{esc(t)} <span class="muted">{esc(source)}</span></h3>'
        if rec is None:
            none = _none(f"no view: {t} did not run here and no check read its recording")
            main.append(f'<section class="view">{head}{none}</section>')
            continue
        lines = _view_lines(rec["text"], f"v{i}-L", marks[t].lines["L"])
        main.append(f'<section class="view" id="view-{i}">{head}{_code(lines)}</section>')
        if rec.get("model"):
            mlines = _view_lines(rec["model"], f"v{i}-M", marks[t].lines["M"])
            model.append(f'<section class="view">{head}{_code(mlines)}</section>')
        else:
            model.append(f'<section class="view">{head}{_none("no model requests")}</section>')
    body.append(f'<div class="views">{"".join(main)}</div>')
    requests = ", ".join(f"{t}: {views[t]['requests']}" for t in targets if t in views)
    marked = sum(len(m.lines["M"]) for m in marks.values())
    body.append(
        '<details class="model" id="model"><summary>Model view: what each agent made the '
        f"model see ({esc(requests or 'no views')} request(s)"
        + (f"; {marked} highlighted line(s)" if marked else "")
        + f')</summary><div class="views">{"".join(model)}</div></details>'
    )

    # Failure output and findings.
    failed = [
        it
        for it in data.get("items", [])
        if it.get("scenario") == s["name"] and it.get("outcome") == "failed"
    ]
    if failed:
        body.append("<h2>Failure output</h2>")
        for it in failed:
            body.append(
                f'<details><summary class="mono">{esc(it["nodeid"])}</summary>'
                f'<pre class="text">{esc(it.get("text", ""))}</pre></details>'
            )
    if s.get("findings"):
        body.append("<h2>Conformance findings</h2>")
        for f in s["findings"]:
            body.append(
                f"<h3>{esc(f['target'])} ({esc(f['policy'])})</h3>"
                f'<pre class="text">{esc(chr(10).join(f["findings"]))}</pre>'
            )
    return page(f"{s['name']} · parity report", "\n".join(body))

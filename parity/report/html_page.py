"""The HTML report's page frame: escaping, the style sheet, the Content-Security-Policy,
and the status shading both page kinds use. Pure.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from parity.core.printable import printable

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1f2328}
h1{font-size:22px;margin:0 0 6px}
h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
h3{font-size:14px;margin:16px 0 6px}
a{color:#0969da;text-decoration:none}
a:hover{text-decoration:underline}
.muted{color:#59636e}
table{border-collapse:collapse;margin:6px 0}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
td.cell{font-size:12.5px;white-space:nowrap;padding:0}
td.cell a,td.cell span.none{display:block;color:inherit}
td.cell span.none{padding:4px 8px}
.cell .line{display:block;padding:2px 8px}
.st-pass{background:#dafbe1}
.st-new{background:#ddf4ff}
.st-skip{background:#f6f8fa;color:#59636e}
.st-fail,.st-differs{background:#ffebe9;color:#82071e}
.st-none{color:#8c959f}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
pre.text{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;padding:8px}
.val{max-width:380px;overflow-wrap:anywhere;white-space:pre-wrap}
.views{display:flex;gap:12px;align-items:flex-start}
.view{flex:1 1 0;min-width:0;border:1px solid #d0d7de;border-radius:6px;overflow:hidden}
.view h3{margin:0;padding:6px 10px;background:#f6f8fa;border-bottom:1px solid #d0d7de}
.code{overflow-x:auto;padding:4px 0}
.ln{display:block;white-space:pre;padding-right:8px}
.ln .no{display:inline-block;width:3.5em;padding-right:8px;text-align:right;color:#8c959f;
 user-select:none}
.ln.hl{background:#ffebe9;box-shadow:inset 3px 0 #cf222e}
.ln.ex{background:#fff8c5;box-shadow:inset 3px 0 #bf8700}
details.model{margin-top:16px}
details>summary{cursor:pointer;font-weight:600}
.tag{display:inline-block;padding:0 6px;border-radius:10px;font-size:11.5px;background:#eaeef2}
.tag.bad{background:#ffebe9;color:#82071e}
.tag.ok{background:#dafbe1;color:#116329}
.key{margin:4px 0 0}
.key span{display:inline-block;padding:0 6px;margin-right:8px}
td.count{white-space:nowrap}
table.sbs{width:100%;table-layout:fixed;margin:0}
table.sbs col.n{width:3.5em}
table.sbs th{text-align:left}
table.sbs td{border:none;padding:0 6px;white-space:pre-wrap;overflow-wrap:anywhere}
table.sbs td.no{color:#8c959f;text-align:right;user-select:none;padding-right:8px}
table.sbs td.del{background:#ffebe9}
table.sbs td.add{background:#dafbe1}
table.sbs td.gap{background:#f6f8fa}
table.sbs del{background:#ffb8b0;text-decoration:none}
table.sbs ins{background:#9be9a8;text-decoration:none}
table.sbs tr.fold>td{padding:0;background:#f6f8fa;border-top:1px solid #d0d7de;
 border-bottom:1px solid #d0d7de}
table.sbs tr.fold summary{padding:1px 8px;color:#59636e;font-weight:normal;
 font-family:system-ui,sans-serif}
.attention{border:1px solid #cf222e;border-radius:6px;padding:8px 14px;margin:10px 0;
 background:#fff8f7}
.attention.clear{border-color:#1a7f37;background:#f6fff8}
.attention h2{margin:0 0 4px;border:none;padding:0}
.attention ol{margin:4px 0;padding-left:22px}
.attention li{margin:2px 0}
table.matrix{width:100%;table-layout:fixed}
table.matrix col.name{width:22%}
table.matrix th{overflow-wrap:anywhere}
table.matrix td.cell{white-space:normal;overflow-wrap:anywhere}
table.matrix td.cell-pass{background:#dafbe1}
table.matrix td.cell-new{background:#ddf4ff}
table.matrix td.cell-skip{background:#f6f8fa}
table.matrix td.cell-fail,table.matrix td.cell-differs{background:#ffebe9}
table.matrix.many thead th.t{writing-mode:vertical-rl;transform:rotate(180deg);
 vertical-align:bottom;white-space:nowrap;text-align:left}
"""


def esc(value: Any) -> str:
    """Text for HTML: control characters and lone surrogates made visible
    (`parity.core.printable`), then everything escaped."""
    return html.escape(printable(str(value)), quote=True)


def page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}</style></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )


_RANK = {"fail": 4, "differs": 4, "new": 2, "pass": 1, "skip": 0}


def cell_status(cell: Mapping[str, Any]) -> str:
    parts = [p["status"] for p in (cell.get("own"), cell.get("parity")) if p]
    return max(parts, key=lambda s: _RANK.get(s, 3)) if parts else "none"

"""The HTML report in a real browser: what a person opening it would look at.

A throwaway project (mini agent targets) with one passing scenario, one whose second
target differs from the reference, and one whose agent text is hostile HTML goes
through the real `parity run --report` under xdist. Headless Chromium then renders
index.html and the scenario pages: `--dump-dom` gives the DOM after loading (after any
script would have run), `--screenshot` a PNG. The checks read the rendered DOM: the
matrix cells, the highlighted difference in both views, the explained one, the model
view collapsed, and the hostile text shown as text, never run (the title unchanged, no
injected element).
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.support.project import AGENT, Project, mini_target

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")

HOSTILE = (
    "<script>document.title='pwned';"
    "document.body.insertAdjacentHTML('beforeend','<p id=\"pwned\">x</p>')</script>"
    '<b id="injected">bold</b></pre></span></details>'
)

SAME = """\
description: one text turn, the same on both targets
targets: [mini, mini-b]
llm:
  - text: hello there
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: say hello}
"""

DIFFERS = """\
description: mini-x advertises loadSession and images in initialize
targets: [mini, mini-x]
diverge:
  - path: steps[0].result.agentCapabilities.promptCapabilities
    targets: [mini-x]
    reason: mini-x advertises images (reviewed)
masks:
  - path: steps[0].result._meta.nonce
    reason: no target sends one (a stale mask, listed anyway)
llm:
  - text: hello there
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: say hello}
"""

SCRIPT = f"""\
description: {json.dumps("the agent says " + HOSTILE)}
targets: [mini, mini-b]
llm:
  - text: {json.dumps(HOSTILE)}
steps:
  - initialize: {{}}
  - new_session: {{as: s1}}
  - prompt: {{session: s1, text: say something hostile}}
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of one run over the three scenarios; its directory."""
    root = tmp_path_factory.mktemp("html-report")
    variant = root / "mini_x_agent.py"
    source = AGENT.read_text()
    assert '"agentCapabilities": {"loadSession": False}' in source
    variant.write_text(
        source.replace(
            '"agentCapabilities": {"loadSession": False}',
            '"agentCapabilities": {"loadSession": True, "promptCapabilities": {"image": True}}',
        )
    )
    project = Project(root / "proj")
    project.write(
        "parity.toml",
        mini_target("mini") + mini_target("mini-b") + mini_target("mini-x", agent=variant),
    )
    project.write("scenarios/demo/same.yaml", SAME)
    project.write("scenarios/demo/differs.yaml", DIFFERS)
    project.write("scenarios/demo/script.yaml", SCRIPT)
    # `parity record`: the first run records the snapshots (`parity run` only checks).
    done = project.parity("record", "-n", "2", "--report", "report")
    assert done.returncode == 1, done.stdout + done.stderr  # demo/differs differs
    assert "parity report: report/index.html" in done.stdout
    return project.root / "report"


def chromium(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def dump_dom(page: Path, profile: Path) -> str:
    done = chromium(f"--user-data-dir={profile}", "--dump-dom", page.as_uri())
    assert done.returncode == 0 and "<html" in done.stdout, done.stderr[-2000:]
    return done.stdout


class Dom(HTMLParser):
    """What a reader sees of a rendered DOM: the title, each table row's cell texts,
    the ids and classes of elements, the `<details>` elements and their `open` state,
    the text of every line of a view (`span.ln`) with its classes."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.rows: list[list[str]] = []
        self.ids: set[str] = set()
        self.tags: list[str] = []
        self.details: list[dict[str, str | None]] = []
        self.lines: list[tuple[str, str, str]] = []
        """(id, classes, text) of each view line."""
        self._stack: list[tuple[str, dict[str, str | None]]] = []
        self._cell: list[str] | None = None
        self._line: list[str] | None = None
        self._line_attrs: dict[str, str | None] = {}
        self._in_title = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append(tag)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "title":
            self._in_title = True
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "details":
            self.details.append(a)
        elif tag == "span" and "ln" in (a.get("class") or "").split() and a.get("id"):
            self._line, self._line_attrs = [], a
        self._stack.append((tag, a))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1].append(" | ".join(t for t in self._cell if t.strip()))
            self._cell = None
        elif (
            tag == "span"
            and self._line is not None
            and self._stack
            and self._stack[-1][1] is self._line_attrs
        ):
            a = self._line_attrs
            self.lines.append((str(a["id"]), str(a.get("class")), "".join(self._line)))
            self._line = None
        if self._stack:
            self._stack.pop()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._cell is not None:
            self._cell.append(data.strip())
        number = bool(self._stack) and self._stack[-1][1].get("class") == "no"
        if self._line is not None and not number:
            self._line.append(data)

    def row(self, first: str) -> list[str]:
        return next(r for r in self.rows if r and r[0] == first)


def test_index_shows_the_matrix_with_each_cells_status_and_category(
    report: Path, tmp_path: Path
) -> None:
    dom = Dom(dump_dom(report / "index.html", tmp_path / "profile"))
    assert dom.title == "parity report"
    header = dom.rows[0]
    assert header[:2] == ["scenario", "mini | reference"]
    assert header[2:] == ["mini-b", "mini-x"]  # reference first, then sorted
    same = dom.row("demo/same")
    assert same[1] == "new" and same[2] == "new | pass: same as mini" and same[3] == "-"
    differs = dom.row("demo/differs")
    assert differs[3] == "new | differs: changed field"
    assert dom.row("demo/script")[2] == "new | pass: same as mini"
    assert "script" not in dom.tags  # no script at all, from us or from an agent
    # Links lead to each scenario's page.
    index = (report / "index.html").read_text()
    assert 'href="scenarios/demo__differs.html#target-1"' in index


def test_the_scenario_page_highlights_the_difference_in_both_views(
    report: Path, tmp_path: Path
) -> None:
    page = report / "scenarios" / "demo__differs.html"
    dom = Dom(dump_dom(page, tmp_path / "profile"))
    assert dom.title == "demo/differs · parity report"
    # The difference, from the diff's paths: both views mark the loadSession line.
    marked = {(i.split("-")[0], text.strip()) for i, cls, text in dom.lines if "hl" in cls}
    assert marked == {("v0", "loadSession: false"), ("v1", "loadSession: true")}, marked
    # The explained one (a diverge rule) is marked as expected, in mini-x's view only.
    expected = [text.strip() for i, cls, text in dom.lines if "ex" in cls.split()]
    assert expected and all(i.startswith("v1-") for i, cls, _ in dom.lines if "ex" in cls)
    assert "promptCapabilities:" in expected and "image: true" in expected
    # The differences table: category, path, both values; the rules with their reasons.
    table = [r for r in dom.rows if r and r[0] == "1"]
    assert table[0][1:5] == [
        "changed field",
        "steps[0].result.agentCapabilities.loadSession",
        "1 initialize: initialize",
        "false",
    ]
    assert table[0][5] == "true"
    rule = dom.row("steps[0].result.agentCapabilities.promptCapabilities")
    assert rule[1:] == ["mini-x", "mini-x advertises images (reviewed)", "1 in mini-x"]
    mask = dom.row("steps[0].result._meta.nonce")
    assert mask[2] == "no target sends one (a stale mask, listed anyway)"
    # The model view is there, collapsed.
    (model,) = [d for d in dom.details if d.get("id") == "model"]
    assert "open" not in model
    assert any(i.startswith("v0-M") and "model:" in text for i, _, text in dom.lines)


def test_hostile_agent_text_is_shown_as_text_and_never_runs(report: Path, tmp_path: Path) -> None:
    page = report / "scenarios" / "demo__script.html"
    text = dump_dom(page, tmp_path / "profile")
    dom = Dom(text)
    assert dom.title == "demo/script · parity report"  # no script changed it
    assert "script" not in dom.tags
    assert "pwned" not in dom.ids and "injected" not in dom.ids
    # The agent's text is in both views, verbatim, as text (YAML folds the long line).
    for view in ("v0", "v1"):
        shown = "\n".join(t for i, _, t in dom.lines if i.startswith(f"{view}-L"))
        assert "text: <script>document.title='pwned';document.body.insert" in shown
        assert 'id="injected">bold</b></pre></span></details>' in shown
    assert "&lt;script&gt;document.title" in text
    raw = page.read_text()
    assert "<script" not in raw and "&lt;script&gt;" in raw
    assert "Content-Security-Policy" in raw  # scripts are refused even if one slipped in


def _png(path: Path) -> tuple[int, int, bytes]:
    """A PNG's width, height and decompressed image data (the IDAT stream)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, size = 8, b"", (0, 0)
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return size[0], size[1], zlib.decompress(idat)


@pytest.mark.parametrize("page", ["index.html", "scenarios/demo__differs.html"])
def test_a_screenshot_of_the_report_is_a_real_picture(
    report: Path, tmp_path: Path, page: str
) -> None:
    shot = tmp_path / "shot.png"
    done = chromium(
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1400,1000",
        "--hide-scrollbars",
        f"--screenshot={shot}",
        (report / page).as_uri(),
    )
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    width, height, pixels = _png(shot)
    assert (width, height) == (1400, 1000)
    assert shot.stat().st_size > 10_000
    # Not a blank page: many distinct rows (text, table lines, colored cells).
    stride = len(pixels) // height
    rows = {pixels[i * stride + 1 : (i + 1) * stride] for i in range(height)}
    assert len(rows) > 100, len(rows)
    assert re.search(rb"[^\x00\xff]", pixels[:100_000])

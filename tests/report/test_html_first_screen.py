"""The HTML report's first screen in a real browser: a release-day run (60 scenarios,
six targets, one drifted snapshot; `tests/report/synthetic.py`) rendered by headless
Chromium at 1400x900.

Two measurements per page, both from the browser's own layout:

- a screenshot of the first screen, kept under `test-artifacts/report/` (or
  `$PARITY_TEST_ARTIFACTS/report/`, for a CI job that publishes a directory), with a
  copy of the report itself (`release-day/`), for a person to look at;
- a probe: a copy of the page with a small script appended (and the report's
  Content-Security-Policy, which refuses scripts, left out of the copy) that writes the
  failing elements' `getBoundingClientRect().top` and the document's widths into
  `document.title`; `--dump-dom` returns the DOM after it ran. The report itself has no
  script; only the probe copy does.

Skipped, with the reason, only where no chromium binary is on PATH (.ci/run installs
one, so CI runs it).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from parity.report.html import write_report
from parity.report.html_page import CSP
from tests.report.synthetic import FAILING, TARGETS, release_day

CHROMIUM = next(
    (p for n in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(n))), None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium/chromium-browser/google-chrome on PATH"
)

WIDTH, HEIGHT = 1400, 900
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("PARITY_TEST_ARTIFACTS") or ROOT / "test-artifacts") / "report"

PROBE = """<script>
(() => {
  const top = (sel) => {
    const e = document.querySelector(sel);
    return e ? Math.round(e.getBoundingClientRect().top + window.scrollY) : -1;
  };
  const d = document.documentElement;
  document.title = JSON.stringify({
    probed: %s,
    scrollWidth: d.scrollWidth, clientWidth: d.clientWidth,
    innerWidth: window.innerWidth, innerHeight: window.innerHeight,
  });
})();
</script>"""


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", *args],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def probe(page: Path, selectors: dict[str, str], profile: Path) -> dict[str, Any]:
    """The page's layout at 1400x900, as the browser measured it (see the module doc):
    each selector's first element's top (document coordinates, -1 if absent), widths."""
    text = page.read_text()
    csp = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
    assert csp in text
    calls = "{" + ", ".join(f"{json.dumps(k)}: top({json.dumps(v)})" for k, v in selectors.items())
    script = PROBE % (calls + "}")
    copy = page.with_name(f"probe-{page.name}")
    copy.write_text(text.replace(csp, "").replace("</body>", script + "</body>"))
    done = chromium(
        f"--user-data-dir={profile}",
        f"--window-size={WIDTH},{HEIGHT}",
        "--dump-dom",
        copy.as_uri(),
    )
    copy.unlink()
    found = re.search(r"<title>(.*?)</title>", done.stdout, re.S)
    assert done.returncode == 0 and found, done.stderr[-2000:]
    measured: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    # The measurement only means something at the width asked for. The height this
    # mode lays out is less than the window's (757 of 900 with chromium 156 here: the
    # window's frame is subtracted); `first_screen` holds the smaller of the two.
    assert measured["innerWidth"] == WIDTH, measured
    measured["first_screen"] = min(HEIGHT, measured["innerHeight"])
    return measured


def screenshot(page: Path, name: str, profile: Path) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / name
    shot.unlink(missing_ok=True)
    done = chromium(
        f"--user-data-dir={profile}",
        f"--window-size={WIDTH},{HEIGHT}",
        f"--screenshot={shot}",
        page.as_uri(),
    )
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    return shot


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release-day report. Each xdist worker writes its own (a shared directory
    would be removed under another worker's browser); the index test keeps a copy
    beside the screenshots."""
    directory = tmp_path_factory.mktemp("release-day")
    write_report(directory, release_day())
    return directory


def test_the_failure_is_on_the_first_screen_and_nothing_scrolls_sideways(
    report: Path, tmp_path: Path
) -> None:
    index = report / "index.html"
    shot = screenshot(index, "index-1400x900.png", tmp_path / "profile")
    shutil.copytree(report, ARTIFACTS / "release-day", dirs_exist_ok=True)  # to open by hand
    measured = probe(
        index,
        {
            "entry": "#attention li.attn-drift",  # the list the page opens with
            "cell": "table.matrix td.cell-fail",  # the red cell in the matrix
            "other": "#attention li:not(.attn-drift)",  # there is no other
        },
        tmp_path / "profile",
    )
    top, screen = measured["probed"], measured["first_screen"]
    assert 0 < top["entry"] < screen, (measured, shot)
    assert 0 < top["cell"] < screen, (measured, shot)
    assert top["other"] == -1
    # No column is hidden and the page does not scroll sideways at 1400 px.
    assert measured["scrollWidth"] <= measured["clientWidth"] <= WIDTH, measured
    text = index.read_text()
    assert f"{FAILING}</a>" in text and all(f">{t}" in text for t in TARGETS)


def test_the_drift_page_opens_on_the_changed_lines(report: Path, tmp_path: Path) -> None:
    page = report / "scenarios" / f"{FAILING.replace('/', '__')}.html"
    screenshot(page, "drift-1400x900.png", tmp_path / "profile")
    measured = probe(
        page,
        {"drift": "#drift-3", "changed": "table.sbs tr.changed", "added": "table.sbs tr.added"},
        tmp_path / "profile",
    )
    top, screen = measured["probed"], measured["first_screen"]
    assert 0 < top["drift"] < top["changed"] < screen, measured
    assert 0 < top["added"] < screen, measured
    assert measured["scrollWidth"] <= measured["clientWidth"], measured


def test_many_targets_still_fit_the_width(tmp_path: Path) -> None:
    targets = ("native", *(f"a-rather-long-target-name-{i}" for i in range(13)))
    data = release_day(n=12, targets=targets)
    write_report(tmp_path / "many", data)
    measured = probe(
        tmp_path / "many" / "index.html",
        {
            "last": "table.matrix th.t:last-child",
            "row2": "table.matrix tbody tr:nth-child(2)",
            "row3": "table.matrix tbody tr:nth-child(3)",
        },
        tmp_path / "profile",
    )
    top = measured["probed"]
    assert measured["scrollWidth"] <= measured["clientWidth"], measured
    assert 0 < top["last"] < measured["first_screen"]
    # Compact cells (a status word and a symbol): a row stays two short lines instead
    # of full labels broken into a narrow column's many lines.
    assert 0 < top["row3"] - top["row2"] < 60, measured

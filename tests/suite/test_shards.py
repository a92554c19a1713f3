"""`parity run --shard K/N --out DIR` in separate processes, then `parity merge`: the
merged summary, JUnit and JSON equal one run's, item by item (timings aside), and the
merge judges what only the whole run can.

A copy of two of the shipped suite's directories (`SUBSET`), their recordings and the
shipped known differences: baseline, where native compares through its recordings and
plus runs live, and peers, where the peers' recordings stand in (the copy has neither a
DSH nor `.cache/peers`), as in CI and on a user's machine without them. Two directories,
not the whole suite: four runs of the whole suite at once were a minute of `make test`
(docs/performance.md, "The test suite's slowest tests"), and what a merge must equal
does not grow with more scenarios. Added to it: a recording of a scenario that no longer
exists (an unused snapshot, seen only by a whole run) and a known difference nothing
uses (stale, seen only by a whole run).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.project import Project, child_env

REPO = Path(__file__).resolve().parents[2]
GONE = "snapshots/baseline/renamed-away/plus.yaml"
STALE = "native-no-such-field"
SUBSET = ("baseline", "peers")
"""11 scenario files, dealt out to 3 shards."""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    proj = Project(tmp_path_factory.mktemp("shards") / "proj")
    proj.write("parity.toml", "")
    for part in SUBSET:
        shutil.copytree(REPO / "scenarios" / part, proj.root / "scenarios" / part)
        shutil.copytree(REPO / "snapshots" / part, proj.root / "snapshots" / part)
    proj.write(GONE, (REPO / "snapshots/baseline/handshake/plus.yaml").read_text())
    known = yaml.safe_load((REPO / "known-differences.yaml").read_text())
    known["differences"].append(
        {
            "id": STALE,
            "target": "native",
            "path": "steps[*].result.noSuchField",
            "sides": {"native": "absent", "others": "absent"},
            "reason": "a fact nobody checks any more",
        }
    )
    proj.write("known-differences.yaml", yaml.safe_dump(known))
    return proj


def cli(proj: Project, *args: str) -> list[str]:
    return [sys.executable, "-m", "parity.cli", *args]


@pytest.fixture(scope="module")
def runs(project: Project) -> dict[str, Any]:
    """One whole run and three shards, all four at once as separate processes (CI=true),
    then the merge."""
    root = project.root
    env = child_env(CI="true")
    single = ["run", "--out", "single", "--report", "single/report"]
    commands = [cli(project, *single)] + [
        cli(project, "run", "--shard", f"{k}/3", "--out", f"shard-{k}", "-q") for k in (1, 2, 3)
    ]
    procs = [
        subprocess.Popen(c, cwd=root, env=env, stdout=subprocess.PIPE, text=True) for c in commands
    ]
    outs = [p.communicate(timeout=1500)[0] for p in procs]
    merge = subprocess.run(
        [
            *cli(project, "merge", "shard-1", "shard-2", "shard-3"),
            *("--junit", "merged/junit.xml", "--json", "merged/parity.json"),
            *("--report", "merged/report"),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return {
        "single": (procs[0].returncode, outs[0]),
        "shards": [(p.returncode, o) for p, o in zip(procs[1:], outs[1:], strict=True)],
        "merge": (merge.returncode, merge.stdout + merge.stderr),
    }


def summary(text: str) -> list[str]:
    """The parity summary's lines: after its header, before the files it names."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "parity summary" in line) + 1
    out = []
    for line in lines[start:]:
        if re.match(r"parity (report|JUnit XML|JSON|ledger|pending):|more:", line):
            break
        out.append(line)
    return out


def lean_json(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    data.pop("generated")
    for item in data["items"]:
        item.pop("duration")
    return data


def lean_junit(path: Path) -> str:
    root = ET.fromstring(path.read_text())
    for el in root.iter():
        el.attrib.pop("time", None)
        el.attrib.pop("timestamp", None)
    cases = sorted(root.iter("testcase"), key=lambda c: (c.get("classname", ""), c.get("name", "")))
    return "\n".join(ET.tostring(c, "unicode") for c in cases) + str(
        sorted(root.find("testsuite").attrib.items())  # type: ignore[union-attr]
    )


def test_every_item_runs_in_exactly_one_shard(project: Project, runs: dict[str, Any]) -> None:
    names = []
    for k in (1, 2, 3):
        data = json.loads((project.root / f"shard-{k}" / "parity.json").read_text())
        names += [item["nodeid"] for item in data["items"]]
        assert data["items"], f"shard {k} ran nothing"
    single = json.loads((project.root / "single" / "parity.json").read_text())
    assert sorted(names) == sorted(item["nodeid"] for item in single["items"])
    # A scenario's items stay in one shard: its parity checks reuse its target runs.
    for k in (1, 2, 3):
        data = json.loads((project.root / f"shard-{k}" / "parity.json").read_text())
        files = {item["file"] for item in data["items"]}
        others = {
            item["file"]
            for j in (1, 2, 3)
            if j != k
            for item in json.loads((project.root / f"shard-{j}" / "parity.json").read_text())[
                "items"
            ]
        }
        assert not files & others


def test_merged_summary_junit_and_json_equal_a_single_run(
    project: Project, runs: dict[str, Any]
) -> None:
    single_code, single_out = runs["single"]
    merge_code, merge_out = runs["merge"]
    assert summary(merge_out) == summary(single_out), merge_out
    assert lean_json(project.root / "merged" / "parity.json") == lean_json(
        project.root / "single" / "parity.json"
    )
    assert lean_junit(project.root / "merged" / "junit.xml") == lean_junit(
        project.root / "single" / "junit.xml"
    )
    # The whole run fails on what only it can see; so does the merge, and alone.
    assert single_code == merge_code == 1, merge_out


def test_the_merged_html_report_equals_a_single_runs(
    project: Project, runs: dict[str, Any]
) -> None:
    # Shards keep the views in their ledgers, so the merged report shows them too.
    stamp = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")
    single, merged = project.root / "single" / "report", project.root / "merged" / "report"
    pages = sorted(p.relative_to(single) for p in single.rglob("*.html"))
    assert len(pages) > 1
    assert pages == sorted(p.relative_to(merged) for p in merged.rglob("*.html"))
    for page in pages:
        ours, theirs = ((d / page).read_text() for d in (merged, single))
        assert stamp.sub("", ours) == stamp.sub("", theirs), page
    assert "session/update" in (single / pages[-1]).read_text() or any(
        "initialize" in (single / p).read_text() for p in pages
    )


def test_only_the_merge_sees_the_unused_snapshot_and_the_stale_difference(
    runs: dict[str, Any],
) -> None:
    _, merge_out = runs["merge"]
    assert "renamed-away/plus.yaml" in merge_out
    assert "1 snapshot file(s) unused: fails the run under CI" in merge_out
    assert f"stale known difference '{STALE}'" in merge_out
    for code, out in runs["shards"]:
        assert code == 0, out
        assert "renamed-away" not in out
        assert "stale known difference" not in out
        assert "not checked (partial run: shard" in out


def test_merge_refuses_shards_that_are_not_one_whole_run(
    project: Project, runs: dict[str, Any]
) -> None:
    done = subprocess.run(
        cli(project, "merge", "shard-1", "shard-3"),
        cwd=project.root,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "shards 1, 3 of 3 (missing 2)" in done.stderr

"""The project's known differences, end to end through `parity run`.

A copy of a shipped scenario with its recorded snapshots (native's recorded from DSH
0.2.1-rc.2, native-rc8's from the real DSH 0.1.0-rc.8) and the shipped
`known-differences.yaml`: acp-plus runs live, both natives compare through their
recordings (PARITY_DSH=off), as on a machine without DSH. Then a recording or the file
is edited the way drift or neglect would edit it, and the run must say exactly what.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.project import Project

REPO = Path(__file__).resolve().parents[2]
SCENARIO = "baseline/handshake"
HANDSHAKE_FACTS = {"native-021-agent-info", "native-prompt-capabilities-only"}


@pytest.fixture
def shipped(tmp_path: Path) -> Project:
    proj = Project(tmp_path / "proj")
    proj.write("parity.toml", "")
    for rel in (
        f"scenarios/{SCENARIO}.yaml",
        f"snapshots/{SCENARIO}/native.yaml",
        f"snapshots/{SCENARIO}/native-rc8.yaml",
        f"snapshots/{SCENARIO}/plus.yaml",
    ):
        (proj.root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, proj.root / rel)
    # The shipped entries this scenario shows; in a project of one scenario the others
    # would rightly be stale.
    shipped = yaml.safe_load((REPO / "known-differences.yaml").read_text())
    entries = [e for e in shipped["differences"] if e["id"] in HANDSHAKE_FACTS]
    assert len(entries) == len(HANDSHAKE_FACTS)
    proj.write("known-differences.yaml", yaml.safe_dump({"differences": entries}))
    return proj


def run(proj: Project, *args: str) -> Any:
    """`parity run` with neither native running: each compares through its recording."""
    return proj.parity("run", *args, ci=True, PARITY_DSH="off", PARITY_DSH_RC8="off")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} not once in {path}"
    path.write_text(text.replace(old, new))


def test_the_shipped_facts_explain_native(shipped: Project) -> None:
    done = run(shipped)
    assert done.returncode == 0, done.stdout
    assert "known differences:" in done.stdout and "stale" not in done.stdout


def test_a_recording_edited_inside_a_declared_difference_fails_naming_it(
    shipped: Project,
) -> None:
    # rc.8's capabilities are a declared difference; its side is pinned to the value the
    # real rc.8 sent, so an edited recording is drift, not an excused difference.
    edit(shipped.snapshot(SCENARIO, "native-rc8"), "        image: false", "        image: true")
    done = run(shipped)
    out = done.stdout
    assert done.returncode == 1, out
    assert "[declared difference drifted] steps[*].result.agentCapabilities" in out
    assert "known difference 'native-prompt-capabilities-only', native-rc8 side" in out
    assert (
        'found {"promptCapabilities": {"audio": false, "embeddedContext": false, "image": true}}'
        in out
    )


def test_a_native_outside_the_versions_is_compared_without_them(shipped: Project) -> None:
    edit(shipped.snapshot(SCENARIO, "native-rc8"), "version: 0.1.0-rc.8", "version: 0.2.0")
    done = run(shipped)
    out = done.stdout
    assert done.returncode == 1, out
    assert "[changed field] steps[0].result.agentCapabilities.mcpCapabilities" in out


def test_an_entry_unused_in_a_whole_run_is_stale(shipped: Project) -> None:
    known = shipped.root / "known-differences.yaml"
    data = yaml.safe_load(known.read_text())
    data["differences"].append(
        {
            "id": "native-no-such-field",
            "target": "native",
            "path": "steps[*].result.noSuchField",
            "sides": {"native": "absent", "others": "absent"},
            "reason": "a fact nobody checks any more",
        }
    )
    known.write_text(yaml.safe_dump(data))
    whole = run(shipped)
    assert whole.returncode == 1, whole.stdout
    assert "stale known difference 'native-no-such-field'" in whole.stdout
    assert "1 passed" in whole.stdout or "passed" in whole.stdout
    # One scenario named: a partial run cannot tell, and says so instead.
    partial = run(shipped, f"scenarios/{SCENARIO}.yaml")
    assert partial.returncode == 0, partial.stdout
    assert "not checked (partial run: not every scenario was collected)" in partial.stdout
    assert "native-no-such-field" in partial.stdout
    assert "stale known difference" not in partial.stdout


def test_a_broken_file_names_file_line_and_key(shipped: Project) -> None:
    known = shipped.root / "known-differences.yaml"
    known.write_text(
        "differences:\n  - id: x\n    target: nativ\n    path: a\n"
        "    sides: {nativ: absent}\n    reason: r\n    versions: '=>1'\n"
    )
    done = shipped.parity("validate")
    out = done.stdout
    assert done.returncode == 2, out
    assert "known-differences.yaml:3:13: differences[0].target: unknown target 'nativ'" in out
    assert "known-differences.yaml:5:12: differences[0].sides: sides has no 'others'" in out
    assert "differences[0].versions: not a PEP 440 specifier set" in out
    done = run(shipped)
    assert done.returncode == 1 and "known differences file is invalid" in done.stdout

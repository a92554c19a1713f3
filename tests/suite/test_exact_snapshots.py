"""A recorded snapshot edited to another JSON type fails the run, end to end.

One scenario sends a request whose params carry each value of the type pairs
(`2`/`2.0`, `true`/`1`, `0`/`false`, `"1"`/`1`, `null`/absent) and is recorded once;
each test edits one value of the recorded file to the other type and runs the real
plugin against the real mini agent: the target fails, its categorized diff names the
field with both values.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.project import Project, mini_target

SCENARIO = """\
description: a request carrying one value of each JSON type pair
targets: [mini]
steps:
  - initialize: {}
  - request: {method: x/types, params: {int: 2, one: true, zero: 0, text: "1", nil: null}}
"""

EDITS = [
    pytest.param("int: 2\n", "int: 2.0\n", "int", "2.0", "2", id="int-float"),
    pytest.param("one: true\n", "one: 1\n", "one", "1", "true", id="true-1"),
    pytest.param("zero: 0\n", "zero: false\n", "zero", "false", "0", id="0-false"),
    pytest.param("text: '1'\n", "text: 1\n", "text", "1", '"1"', id="string-number"),
    pytest.param("nil: null\n", "", "nil", "(absent)", "null", id="null-absent"),
]
"""(the recorded line, its edit, the field, the recording's value and the run's as the
diff prints them)."""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = Project(tmp_path_factory.mktemp("exact") / "proj")
    project.write("parity.toml", mini_target("mini"))
    project.write("scenarios/demo/types.yaml", SCENARIO)
    done = project.parity("record")
    assert done.returncode == 0, done.stdout + done.stderr
    return project


@pytest.mark.parametrize(("old", "new", "field", "was", "now"), EDITS)
def test_a_snapshot_edited_to_the_other_type_fails(
    recorded: Project, tmp_path: Path, old: str, new: str, field: str, was: str, now: str
) -> None:
    project = Project(tmp_path / "proj")
    shutil.copytree(recorded.root, project.root)
    snap = project.snapshot("demo/types", "mini")
    lines = snap.read_text().splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.lstrip() == old]
    assert len(at) == 1, lines
    indent = lines[at[0]][: -len(old)]
    lines[at[0]] = indent + new if new else ""  # null -> absent: the whole line goes
    snap.write_text("".join(lines))
    done = project.parity("run")
    assert done.returncode == 1, done.stdout
    out = done.stdout
    assert "demo/types: mini no longer matches its snapshot" in out, out
    assert f"[changed field] steps[1].send.params.{field}" in out
    assert f"- snapshot: {was}\n" in out and f"+ mini: {now}\n" in out, out

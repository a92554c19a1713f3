"""Mutation test: change one field of acp-plus's output, and `parity run` must say so.

`acp_plus/` is copied to a temp dir and one output field is edited with a text replace
(the tool call `kind`, or the stop reason of a completed turn). A target running the copy
(through PYTHONPATH, which precedes the editable install) must then fail, both against
the untouched `plus` (a parity item) and against the snapshot `plus` recorded before the
edit, with a report naming the scenario, the step and the field.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import acp_plus
from tests.support.project import Project

SCENARIO = """\
description: reasoning, one fixture tool call, then text (contract 7.4 #4)
targets: [plus, mutant]
tools:
  - name: echo
    description: Return a deterministic result.
    result: tool result
llm:
  - reasoning: inspect first
    tool_calls: [{id: call-1, name: echo, arguments: {}}]
    usage: {input: 8, output: 2, reasoning: 1}
  - text: done
    usage: {input: 5, output: 4}
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: go}
"""

PLUS_CONFIG = """\
'''
provider = "mock"
model = "mock"

[providers.parity]
api = "parity-stream"
base_url = "{llm_base}"
'''"""


def mutant_target(copy: Path) -> str:
    """The built-in `plus` launch, importing acp_plus from `copy` instead."""
    return (
        "[targets.mutant]\n"
        'family = "dsh"\ndialect = "parity-stream"\nfixture_tools = "stream"\n'
        'command = ["{python}", "-m", "acp_plus", "--config", "{home}/acp-plus.toml",'
        ' "--home", "{home}/acp-plus"]\n'
        f'env = {{ PYTHONPATH = "{copy}" }}\n'
        f'[targets.mutant.files]\n"acp-plus.toml" = {PLUS_CONFIG}\n'
    )


def mutated_copy(tmp: Path, module: str, old: str, new: str) -> Path:
    """A copy of the acp_plus package with `old` replaced by `new` once in `module`."""
    source = Path(acp_plus.__file__).parent
    root = tmp / "mutant"
    shutil.copytree(source, root / "acp_plus", ignore=shutil.ignore_patterns("__pycache__"))
    path = root / "acp_plus" / module
    text = path.read_text()
    assert text.count(old) == 1, f"mutation anchor {old!r} not unique in {module}"
    path.write_text(text.replace(old, new))
    return root


MUTATIONS = [
    pytest.param(
        "protocol/updates.py",
        '"kind": "other",',
        '"kind": "execute",',
        "[changed field] steps[2].updates[2].kind",
        ('"other"', '"execute"'),
        id="tool-call-kind",
    ),
    pytest.param(
        "protocol/settlement.py",
        '"completed": "end_turn",',
        '"completed": "max_tokens",',
        "[stop reason] steps[2].result.stopReason",
        ('"end_turn"', '"max_tokens"'),
        id="stop-reason",
    ),
]


@pytest.mark.parametrize(("module", "old", "new", "field", "values"), MUTATIONS)
def test_parity_names_scenario_step_and_field(
    project: Project,
    tmp_path: Path,
    module: str,
    old: str,
    new: str,
    field: str,
    values: tuple[str, str],
) -> None:
    copy = mutated_copy(tmp_path, module, old, new)
    project.write("parity.toml", mutant_target(copy))
    project.root.joinpath("scenarios/demo/text.yaml").unlink()
    project.write("scenarios/tools/echo-turn.yaml", SCENARIO)
    done = project.parity("record")
    out = done.stdout
    assert done.returncode == 1, out
    assert "FAILED scenarios/tools/echo-turn.yaml::parity[mutant~plus]" in out
    assert "tools/echo-turn: mutant differs from plus (exact profile)" in out
    assert 'step 3 prompt: prompt s1 "go"' in out
    assert field in out
    assert f"- plus: {values[0]}" in out and f"+ mutant: {values[1]}" in out
    assert "1 differs" in out and "2 new" in out
    # No item skipped (the diff itself may quote a tool description saying "skip it").
    assert "SKIPPED" not in out and " skipped" not in out.splitlines()[-1]


@pytest.mark.parametrize(("module", "old", "new", "field", "values"), MUTATIONS[:1])
def test_recorded_snapshot_catches_the_mutation(
    project: Project,
    tmp_path: Path,
    module: str,
    old: str,
    new: str,
    field: str,
    values: tuple[str, str],
) -> None:
    project.write("parity.toml", "")
    project.root.joinpath("scenarios/demo/text.yaml").unlink()
    project.write("scenarios/tools/echo-turn.yaml", SCENARIO.replace("[plus, mutant]", "[plus]"))
    assert project.parity("record").returncode == 0
    copy = mutated_copy(tmp_path, module, old, new)
    project.write("parity.toml", f'[targets.plus.env]\nPYTHONPATH = "{copy}"\n')
    done = project.parity("run", ci=True)
    out = done.stdout
    assert done.returncode == 1, out
    assert "tools/echo-turn: plus no longer matches its snapshot" in out
    assert field in out
    assert "-        kind: other" in out or "-    kind: other" in out

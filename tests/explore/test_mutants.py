"""Seeded bugs are found: `parity explore --targets plus,plus-<mutation>` (a subprocess in
a throwaway project, no pytest inside) against acp-plus with one deliberate break
(tests/fixtures/explore-mutants/mutant_plus.py), a small fixed budget and seed. Each
must exit 1, write a finding of the bug's kind, and that file must make `parity run`
fail the parity check with the same difference.

The seeds and example counts were chosen by running the command: a fixed seed draws the
same examples on every machine. The budget bounds the shrinking too: a finding cut short
by it is still written (less minimal), which is all these tests ask."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.support.project import Project

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "explore-mutants"

# mutation -> (seed, max examples, budget seconds, the finding's category and path shape)
# The budgets are three times what the examples took on a loaded 2-core machine: the
# example count ends a run on a fast machine, the budget only guards a slow one (CI runs
# these beside the rest of the suite on every core).
MUTANTS = {
    "permission-kind": (
        1, 20, 270, "[changed field] steps[*].agent_requests[*].params.options[*].kind",
    ),
    "drop-after-cancel": (1, 40, 360, "[missing update] steps[*].updates[*]"),
    "rawinput": (3, 60, 540, "[changed field] steps[*].updates[*].rawInput"),
}  # fmt: skip


@pytest.fixture
def mutants(tmp_path: Path) -> Project:
    proj = Project(tmp_path / "proj")
    proj.root.mkdir(parents=True)
    for name in ("parity.toml", "mutant_plus.py"):
        shutil.copy(FIXTURE / name, proj.root / name)
    (proj.root / "scenarios").mkdir()
    return proj


def explore(proj: Project, target: str, seed: int, examples: int, budget: int, *extra: str) -> str:
    done = proj.parity(
        "explore", "--targets", f"plus,{target}", "--seed", str(seed),
        "--max-examples", str(examples), "--budget", str(budget), *extra, timeout=budget + 120,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "explore:" in done.stderr  # progress while it ran
    return done.stdout


def descriptions(proj: Project) -> dict[str, str]:
    found = sorted((proj.root / "scenarios" / "found").glob("*.yaml"))
    return {p.stem: yaml.safe_load(p.read_text())["description"] for p in found}


@pytest.mark.parametrize("mutation", sorted(MUTANTS))
def test_a_seeded_bug_is_found_and_its_scenario_reproduces_it(
    mutants: Project, mutation: str
) -> None:
    seed, examples, budget, expected = MUTANTS[mutation]
    out = explore(mutants, f"plus-{mutation}", seed, examples, budget, "--no-database")
    assert expected in out.replace("\n      ", " ")
    written = {stem: d for stem, d in descriptions(mutants).items() if expected in d}
    assert written, (out, descriptions(mutants))
    stem = sorted(written)[0]
    assert f"seed {seed}" in written[stem] and f"targets plus,plus-{mutation}" in written[stem]
    # The file is a scenario like any other: it validates, and `parity run` shows the bug.
    assert mutants.parity("validate", f"scenarios/found/{stem}.yaml").returncode == 0
    run = mutants.parity("run", f"found/{stem}", timeout=300)
    category, _, _ = expected.partition(" ")
    assert f"plus-{mutation} vs plus, in found/{stem}" in run.stdout, run.stdout
    assert category.strip("[]") in run.stdout


def test_the_replay_database_starts_a_second_run_from_the_known_finding(
    mutants: Project,
) -> None:
    database = mutants.root / ".cache" / "explore" / "plus~plus-permission-kind"
    seed, examples, budget, expected = MUTANTS["permission-kind"]
    explore(mutants, "plus-permission-kind", seed, examples, budget)
    assert database.is_dir() and any(database.rglob("*"))
    shutil.rmtree(mutants.root / "scenarios" / "found")
    # Another seed and a single example: only the database can bring the finding back.
    out = explore(mutants, "plus-permission-kind", seed + 1000, 1, budget)
    assert expected in out.replace("\n      ", " ")

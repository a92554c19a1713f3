"""A step kind is one entry of the driver's table (`STEP_KINDS`, parity/driver/dispatch.py)
and one property of the scenario schema's `step` (parity/schema/scenario.schema.json):
each side names every kind of the other, so a kind added to one alone fails here by name
instead of as a run-time "unknown step kind" (or a schema error for a valid step)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parity.driver.dispatch import STEP_KINDS
from parity.scenario.model import STEP_AFTER

SCHEMA = Path(__file__).resolve().parents[2] / "parity" / "schema" / "scenario.schema.json"


def schema_step_kinds() -> list[str]:
    """The step's properties but `after`, which a step of any kind may hold beside it."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return [key for key in schema["$defs"]["step"]["properties"] if key != STEP_AFTER]


@pytest.mark.parametrize("kind", schema_step_kinds())
def test_the_driver_runs_every_step_kind_of_the_schema(kind: str) -> None:
    assert kind in STEP_KINDS, f"{kind}: in the schema's step, not in STEP_KINDS"


@pytest.mark.parametrize("kind", list(STEP_KINDS))
def test_the_schema_describes_every_step_kind_the_driver_runs(kind: str) -> None:
    assert kind in schema_step_kinds(), f"{kind}: in STEP_KINDS, not in the schema's step"


@pytest.mark.parametrize("kind", list(STEP_KINDS))
def test_the_scenario_docs_describe_every_step_kind(kind: str) -> None:
    """docs/scenarios.md's `steps` table has a row for each kind."""
    doc = (SCHEMA.parents[2] / "docs" / "scenarios.md").read_text(encoding="utf-8")
    section = doc.partition("\n## `steps`\n")[2].partition("\n## ")[0]
    assert f"\n| `{kind}` |" in section, f"{kind}: no row in docs/scenarios.md's steps table"

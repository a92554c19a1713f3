"""Collection: each scenario file becomes its target items and parity items.

`scenarios/baseline/text-turn.yaml` yields one `TargetItem` per target (`...::plus`) and
one `ParityItem` per non-reference target (`...::parity[plus~native]`); a file that does
not validate yields one failing `InvalidScenarioItem` (`...::validate`) listing its
errors as file:line. `--targets +name` adds a target to every scenario whose reference
target is of its family (except a peer scenario that calls one agent's own tools).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from parity.report.ledger import ItemRecord
from parity.scenario.errors import ScenarioInvalid
from parity.scenario.load import load_scenario
from parity.suite.items import PARITY_MARK, ScenarioFailure
from parity.suite.parity_item import ParityItem
from parity.suite.state import STATE
from parity.suite.target_item import TargetItem
from parity.targets.spec import joins

SUFFIXES = (".yaml", ".yml")


def is_scenario(path: Path, scenarios_dir: Path) -> bool:
    """Whether `path` is a scenario file: YAML below the project's scenarios directory."""
    return path.suffix in SUFFIXES and path.resolve().is_relative_to(scenarios_dir.resolve())


class ScenarioFile(pytest.File):
    """One scenario file: its target items and parity items, or one invalid-file item."""

    def collect(self) -> Iterator[pytest.Item]:
        state = self.config.stash[STATE]
        try:
            scenario = load_scenario(self.path, state.config.scenarios_dir)
        except ScenarioInvalid as exc:
            yield InvalidScenarioItem.from_parent(self, name="validate", message=str(exc))
            return
        except (OSError, UnicodeDecodeError) as exc:
            yield InvalidScenarioItem.from_parent(
                self, name="validate", message=f"{self.path}: cannot read: {exc}"
            )
            return
        reference = scenario.targets[0]
        specs = state.config.targets
        own_tools = scenario.calls_builtin_tools
        state.ledger.joinable[scenario.name] = {
            name for name in specs if joins(name, scenario.targets, own_tools, specs)
        }
        extra = []
        for name in sorted(state.added):
            state.added_to.setdefault(name, 0)
            if name in state.ledger.joinable[scenario.name]:
                extra.append(name)
                state.added_to[name] += 1
        all_targets = [*scenario.targets, *extra]
        state.ledger.scenarios[scenario.name] = all_targets
        state.ledger.collected.scenario(scenario, all_targets, state.config.root)
        for target in all_targets:
            item = TargetItem.from_parent(self, name=target, scenario=scenario, target=target)
            item.added = target in extra
            item.add_marker(target)
            yield item
        if scenario.compare == "none":
            return
        for other in all_targets[1:]:
            check = ParityItem.from_parent(
                self,
                name=f"parity[{other}~{reference}]",
                scenario=scenario,
                target=other,
                reference=reference,
            )
            check.added = other in extra
            check.add_marker(PARITY_MARK)
            check.add_marker(other)
            yield check


class InvalidScenarioItem(pytest.Item):
    """Stands for a scenario file that does not validate; fails with its errors."""

    def __init__(self, *, message: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.message = message

    def runtest(self) -> None:
        ItemRecord(invalid=str(self.path)).attach(self.user_properties)
        raise ScenarioFailure(f"invalid scenario file:\n{self.message}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ScenarioFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.path.name}: invalid scenario"

"""The checker never raises and always points somewhere, whatever a file holds."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import yaml

from parity.scenario.load import check_text, discover

ROOT = Path(__file__).resolve().parents[2]
JUNK: list[Any] = [None, 0, -1, 3.5, True, "", "x", [], [None], {}, {"?": 1}, {"as": []}]


def paths_of(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths_of(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths_of(v, (*path, i))
    return out


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: replaced(v, rest, new) if k == head else v for k, v in value.items()}
    return [replaced(v, rest, new) if i == head else v for i, v in enumerate(value)]


def test_mutated_scenarios_never_crash_the_checker() -> None:
    rng = random.Random(20261129)
    files = discover(ROOT / "scenarios")
    checked = 0
    for _ in range(120):
        data = yaml.safe_load(rng.choice(files).read_text())
        target = rng.choice(paths_of(data))
        mutant = replaced(data, target, rng.choice(JUNK))
        text = yaml.safe_dump(mutant, sort_keys=False) if mutant is not None else ""
        findings, _, _ = check_text(text, "mutant.yaml")
        assert all(f.line >= 1 and f.column >= 1 for f in findings), findings
        checked += bool(findings)
    # Most mutations break something; the check above must have been exercised.
    assert checked > 60


def test_text_noise_never_crashes_the_checker() -> None:
    rng = random.Random(7)
    source = (ROOT / "scenarios" / "baseline" / "reasoning-tool-usage.yaml").read_text()
    for _ in range(60):
        chars = list(source)
        for _ in range(rng.randint(1, 5)):
            chars.insert(rng.randrange(len(chars)), rng.choice(":-[]{}'\"&*!|>#\t\n x"))
        findings, _, _ = check_text("".join(chars), "noise.yaml")
        assert all(f.line >= 1 for f in findings)

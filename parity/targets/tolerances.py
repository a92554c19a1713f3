"""What a target table says about every run of that target: its timeouts and its
expected problems (docs/targets.md, "Keys").

A user's own agent joins the shipped suite through its table alone, so what is a fact of
the agent rather than of one scenario is declared there: it needs 10 s to start, or it
always leaves one kind of problem behind. Pure over plain data: TOML values -> timeouts
and `ExpectedProblem`s, or a `TableError` naming the key. How the two meet a scenario's
own values: `effective_timeouts` (here) and `parity.checks.expected.judge` (`standing`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

from parity.scenario.model import ExpectedProblem, Where

TIMEOUT_KEYS = ("startup", "response", "run")
"""The keys of a scenario's `timeouts` (docs/scenarios.md); a table takes the same."""
MAX_TIMEOUT = 3600.0
"""An upper bound that catches milliseconds written as seconds."""


class TableError(ValueError):
    """A key of a target table that cannot be used; the message names the key
    (`parity.targets.spec` adds the file and the target: `TargetConfigError`)."""


def parse_timeouts(value: Any) -> dict[str, float]:
    """`timeouts = {startup = 30, response = 20}` -> seconds per key."""
    if not isinstance(value, dict):
        raise TableError("`timeouts` must be a table, e.g. {startup = 30}")
    out: dict[str, float] = {}
    for key, seconds in value.items():
        if key not in TIMEOUT_KEYS:
            raise TableError(f"`timeouts.{key}`: unknown key; use {', '.join(TIMEOUT_KEYS)}")
        # bool is an int subclass; `startup = true` is a typo, not one second.
        number = isinstance(seconds, int | float) and not isinstance(seconds, bool)
        if not number or not 0 < seconds <= MAX_TIMEOUT:
            raise TableError(
                f"`timeouts.{key}` must be seconds above 0 and at most "
                f"{MAX_TIMEOUT:g}, got {seconds!r}"
            )
        out[key] = float(seconds)
    return out


@functools.cache
def problem_kinds() -> tuple[str, ...]:
    """The problem kinds an `expect_problems` entry may name: the scenario schema's enum,
    read as JSON (jsonschema itself is not needed to read a target table)."""
    text = resources.files("parity").joinpath("schema/scenario.schema.json").read_text("utf-8")
    kind = json.loads(text)["$defs"]["expectedProblem"]["properties"]["kind"]
    return tuple(kind["enum"])


_ENTRY_KEYS = ("kind", "match", "reason")
"""A scenario entry's keys less `targets`: a table's entries are for its own target."""


def parse_expect_problems(value: Any, where: str) -> tuple[ExpectedProblem, ...]:
    """`expect_problems = [{kind = ..., match = ..., reason = ...}]` -> entries for this
    target only; `where` (the file and the target) is where each was declared."""
    if not isinstance(value, list):
        raise TableError("`expect_problems` must be a list of tables")
    out = []
    for i, entry in enumerate(value):
        key = f"expect_problems[{i}]"
        if not isinstance(entry, dict):
            raise TableError(f"`{key}` must be a table {{kind, match, reason}}")
        unknown = sorted(entry.keys() - set(_ENTRY_KEYS))
        if unknown:
            hint = " (a target's entries apply to it alone)" if "targets" in unknown else ""
            raise TableError(f"`{key}`: unknown key(s) {unknown}{hint}")
        kind, reason, match = entry.get("kind"), entry.get("reason"), entry.get("match")
        if kind not in problem_kinds():
            raise TableError(
                f"`{key}.kind` must be a problem kind ({', '.join(problem_kinds())}), got {kind!r}"
            )
        if not isinstance(reason, str) or not reason.strip():
            raise TableError(f"`{key}.reason` is required: which fact of the agent causes it")
        if match is not None and (not isinstance(match, str) or not match):
            raise TableError(f"`{key}.match` must be a non-empty string")
        out.append(ExpectedProblem(kind, reason, None, match, Where(where)))
    return tuple(out)


def effective_timeouts(
    defaults: Mapping[str, float], scenario: Mapping[str, float], target: Mapping[str, float]
) -> dict[str, float]:
    """Each timeout of one run: where the scenario and the target both set a key, the
    larger wins.

    A timeout bounds how long the harness waits for an agent; it is not behaviour under
    test. The target's value says how slow this agent is (a scenario's author cannot
    know every agent), a scenario's how long its own steps may take (a long turn), so
    the run needs both bounds to hold. A scenario that lowers a timeout to make an
    expected hang fail fast still sees the hang, only later; the reverse choice would
    fail a slow agent on a limit its table already raised.
    """
    out = dict(defaults)
    for key in scenario.keys() | target.keys():
        given = [v[key] for v in (scenario, target) if key in v]
        out[key] = max(given)
    return out

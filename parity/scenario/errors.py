"""What the scenario checker reports: `ScenarioError` findings and `ScenarioInvalid`.

Shared by the YAML, schema and cross-check passes (`parity.scenario.yaml_positions`,
`parity.scenario.schema_findings`, `parity.scenario.checks`, `parity.scenario.step_checks`).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

Severity = Literal["error", "warning"]
KeyPath = tuple[str | int, ...]


@dataclass(frozen=True)
class ScenarioError:
    """One problem found in a scenario file, with where it is and how to fix it."""

    file: str
    line: int
    column: int
    key: str
    """The key path it concerns, e.g. `steps[2].prompt`; empty for the whole file."""
    message: str
    hint: str = ""
    severity: Severity = "error"
    """`warning`s are reported but do not make the file invalid."""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        text = f"{where}: {self.key or '(top level)'}: "
        text += "warning: " if self.severity == "warning" else ""
        text += self.message
        return f"{text} ({self.hint})" if self.hint else text


class ScenarioInvalid(Exception):
    """A scenario file has errors; `errors` holds every one of them (warnings too)."""

    def __init__(self, errors: Sequence[ScenarioError]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))


RULE_REASON_HINT = "every diverge/mask entry says why the difference is expected"
"""The hint of every finding about a `diverge`/`masks` entry's missing or blank reason."""


def did_you_mean(word: Any, choices: Sequence[str]) -> str:
    """A `did you mean ...?` hint naming the choice closest to `word`, or empty."""
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else ""

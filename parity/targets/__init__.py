"""Targets: the agents the harness drives, from their TOML declarations to one run's
`Launch`.

`spec` (declarations: `targets.toml` built-ins merged with the project's tables),
`tolerances` (a table's timeouts and expected problems), `launch` (a target rendered
for one run, availability, setup), `dsh` (the native launch
kit, with its parity-stream plugin in `adapters/dsh/`) and `peers` (installing the
third-party agents). The public surface below loads on first use (`parity.lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parity.lazy import surface

if TYPE_CHECKING:
    from parity.targets.launch import Launch, availability, plan, run_setup
    from parity.targets.spec import TargetConfigError, TargetSpec

__all__ = [
    "Launch",
    "TargetConfigError",
    "TargetSpec",
    "availability",
    "plan",
    "run_setup",
]

__getattr__ = surface(
    __name__,
    {
        "Launch": "parity.targets.launch",
        "availability": "parity.targets.launch",
        "plan": "parity.targets.launch",
        "run_setup": "parity.targets.launch",
        "TargetConfigError": "parity.targets.spec",
        "TargetSpec": "parity.targets.spec",
    },
)

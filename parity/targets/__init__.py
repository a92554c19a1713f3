"""Targets: the agents the harness drives, from their TOML declarations to one run's
`Launch`.

`spec` (declarations: `targets.toml` built-ins merged with the project's tables),
`launch` (a target rendered for one run, availability, setup), `dsh` (the native launch
kit, with its parity-stream plugin in `adapters/dsh/`) and `peers` (installing the
third-party agents). The package's public surface is below; harness code imports each
name from the module that defines it.
"""

from parity.targets.launch import Launch, availability, plan, run_setup
from parity.targets.spec import TargetConfigError, TargetSpec

__all__ = ["Launch", "TargetConfigError", "TargetSpec", "availability", "plan", "run_setup"]

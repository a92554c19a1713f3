"""Targets: the agents the harness drives, from their TOML declarations to one run's
`Launch`.

`spec` (declarations: `targets.toml` built-ins merged with the project's tables),
`tolerances` (a table's timeouts and expected problems), `launch` (a target rendered
for one run, availability, setup), `dsh` (the native launch
kit, with its parity-stream plugin in `adapters/dsh/`) and `peers` (installing the
third-party agents).
"""

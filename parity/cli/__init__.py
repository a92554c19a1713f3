"""The `parity` command (`parity.cli.main:main`, the console script).

`main` (arguments and dispatch), `project` (the project's configuration and named
scenarios, for every command), `run` (run and record through pytest), `validate`, and
`inspect` (show, diff, calibrate).
"""

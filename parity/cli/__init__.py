"""The `parity` command (`parity.cli.main:main`, the console script).

`main` (arguments and dispatch), `project` (the project's configuration and named
scenarios, for every command), `run` (run and record through pytest), `validate`,
`inspect` (show, diff, calibrate), `review` and `pending` (`parity review`, live or
`--from DIR`), `capture` and `explore`. All but `run` work on the engine
(`parity.engine`) without pytest.
"""

"""The engine: a scenario run against a target, without pytest.

`runner` (scenario x target -> transcript -> normalized view and conformance findings,
with an optional run cache shared between processes) and `store` (the snapshot files:
layout, reads, writes, deletes, pending snapshots). The pytest plugin (`parity.suite`),
the commands (`parity.cli`), capture and explore are its clients; nothing here imports
pytest or syrupy.
"""

"""The suite: scenarios x targets as pytest items, the runs behind them, their snapshots.

`plugin` (the pytest plugin object and its options), `state` (the session's state in the
stash), `collect` (scenario files -> items), `items`, `target_item` and `parity_item`,
`snapshots` (the syrupy extension, and what syrupy cannot do for scenario items),
`summary` (the session's end), `runner` (scenario x target -> transcript -> view, with
the session's run cache) and `review` (`parity review`).
"""

"""The suite: scenarios x targets as pytest items, and their snapshots through syrupy.

`plugin` (the pytest plugin object and its options), `state` (the session's state in the
stash), `collect` (scenario files -> items), `items`, `target_item` and `parity_item`,
`snapshots` (the syrupy extension, and what syrupy cannot do for scenario items) and
`summary` (the session's end). The runs behind the items are the engine's
(`parity.engine.runner`), and so are the snapshot files (`parity.engine.store`).
"""

"""Scenario files: YAML -> a typed, validated `Scenario`, the first stage of the flow.

`model` (the types), `load` (text -> findings, a valid file -> `Scenario`), the checking
passes `yaml_positions`, `schema_findings`, `checks` and `step_checks` (their findings are
`errors.ScenarioError`s), and `selectors`, the path grammar masks and diverge rules are
written in.
"""

"""`parity explore`: generated scenarios run on two targets, every difference no declared
difference explains shrunk to a minimal scenario file (docs/explore.md).

Generation is pure (`vocabulary` reads the schemas; `model_side`, `client_side` and
`acp_params` draw the parts, `generate` the whole scenario), `findings` judges and writes
plain data, and `engine` runs Hypothesis over the engine's runner.
"""

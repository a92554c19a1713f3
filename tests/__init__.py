"""The harness's tests, laid out like `parity/` (one directory per package); shared
helpers are `tests.support`, shared fixtures `tests/conftest.py`. `tests/plus/` tests
acp-plus."""

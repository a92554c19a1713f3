"""Loads the parity pytest plugin, which collects `scenarios/**/*.yaml` as test items."""

pytest_plugins = ["parity.suite.plugin"]

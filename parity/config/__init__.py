"""The project's configuration: `parity.toml` (or `[tool.parity]`) -> `Config`."""

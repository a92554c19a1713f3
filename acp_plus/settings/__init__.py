"""The deployment's configuration: the TOML document, its one schema, the frozen `Config`.

Above the ACP rules and the core (its defaults name core values and the model options),
below what builds sessions from it (`live/`, `features/`, `server/`).
"""

"""Package surfaces loaded on first use (PEP 562).

A package `__init__` names its small public surface and where each name is defined; the
defining module is imported only when the name is first looked up. Importing one module
of a package therefore never imports the rest of it: the pytest plugin loads for every
test run of the repository, `python -m parity.checks.acp_schema` and
`python -m parity.fakellm.mcp_stdio` must not find their module imported already (runpy
warns), and an MCP fixture server started per agent session must not pay for the HTTP
server. Harness code imports names from their defining modules, not from the surface.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def surface(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that resolves each name in `homes` (name ->
    defining module) on first use."""

    def __getattr__(name: str) -> Any:
        if name in homes:
            return getattr(importlib.import_module(homes[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__

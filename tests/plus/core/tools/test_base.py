"""The tool registry: the order the model is shown the tools in."""

from __future__ import annotations

from typing import Any, ClassVar

from acp_plus.core.tools.base import ToolRegistry


class _Named:
    description = ""
    parameters: ClassVar[dict[str, Any]] = {}

    def __init__(self, name: str) -> None:
        self.name = name


def test_specs_are_in_native_order_whatever_the_registration_order() -> None:
    """Native sorts every tool it shows the model (built-in and fixture alike) by name,
    comparing UTF-16 code units as JavaScript's `<` does: uppercase before lowercase,
    and a name above the BMP (a surrogate pair, 0xD83D...) before U+FFFF, where Python's
    code-point order puts it after."""
    names = ["zeta", "read", "\uffff", "Upper", "\U0001f600", "alpha", "bash"]
    registry = ToolRegistry(_Named(n) for n in names)  # type: ignore[misc]
    assert registry.names() == names
    assert [s["name"] for s in registry.specs()] == [
        "Upper",
        "alpha",
        "bash",
        "read",
        "zeta",
        "\U0001f600",
        "\uffff",
    ]

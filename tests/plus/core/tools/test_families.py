"""The built-in tool families: which tools a selection offers, in which order, with
which guidance, and what it says about the families acp-plus lacks."""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from acp_plus.core.context import DEFAULT_IDENTITY, DEFAULT_PERSONA, system_prompt
from acp_plus.core.tools.base import Tool
from acp_plus.core.tools.families import (
    DEFAULT_FAMILIES,
    FAMILIES,
    FAMILY_NAMES,
    IMPLEMENTED,
    Family,
    ToolSetup,
    offered,
    select,
)
from acp_plus.live.runtime import build_runtime
from acp_plus.settings.config import build


def test_select_keeps_native_order_whatever_the_order_asked() -> None:
    assert [f.name for f in select(["fs", "subagent", "bash"])] == ["bash", "fs", "subagent"]
    assert select([]) == ()


def test_the_implemented_families_offer_their_tools_and_the_rest_is_missing() -> None:
    offer = offered(select(["web", "fs", "bash"]), ToolSetup(home=Path("/h")))
    assert [t.name for t in offer.tools] == ["bash", "read", "write", "edit", "read_image"]
    assert offer.missing == ("web",)
    assert IMPLEMENTED == (
        "bash",
        "fs",
        "fs-search",
        "jobs",
        "todo",
        "skill",
        "goal",
        "workflow",
        "ralph",
        "subagent",
    )
    assert set(IMPLEMENTED) < set(FAMILY_NAMES) == {f.name for f in FAMILIES}
    # `builtin_tools = true` offers native 0.2.1-rc.2's families: it mounts no ralph.
    assert tuple(name for name in IMPLEMENTED if name != "ralph") == DEFAULT_FAMILIES


def test_ralph_is_offered_when_named_with_its_paragraph() -> None:
    from acp_plus.core.tools.ralph_text import GUIDANCE

    offer = offered(select(["ralph"]), ToolSetup())
    assert [t.name for t in offer.tools] == ["ralph"]
    assert offer.guidance == GUIDANCE and offer.missing == ()


def _tool(name: str) -> Tool:
    class Named:
        description = ""
        parameters: ClassVar[dict[str, object]] = {}

    tool = Named()
    tool.name = name  # type: ignore[attr-defined]
    return tool  # type: ignore[return-value]


def test_guidance_follows_the_families_order_and_may_depend_on_other_families() -> None:
    """Native's grep paragraph adds a sentence when `read` is mounted: a family's
    guidance may be a function of every offered built-in tool name."""
    seen: list[Collection[str]] = []

    def grep_guidance(names: Collection[str]) -> Sequence[str]:
        seen.append(names)
        return ["grep: use read too."] if "read" in names else ["grep."]

    reader = Family("fs", lambda setup: [_tool("read")], ("read it.", ""))
    searcher = Family("fs-search", lambda setup: [_tool("grep")], grep_guidance)
    lacking = Family("web", None, ("never shown",))
    offer = offered((reader, searcher, lacking), ToolSetup())
    assert offer.guidance == ("read it.", "grep: use read too.")
    assert seen == [frozenset({"read", "grep"})]
    assert offered((searcher,), ToolSetup()).guidance == ("grep.",)


def test_the_system_prompt_is_identity_persona_then_guidance() -> None:
    """Native's composition (its sections ordered, empty ones dropped, joined by a blank
    line), checked against a recording of native 0.2.1-rc.2 with built-in tools on."""
    from parity.view.dump import load_view

    root = Path(__file__).resolve().parents[4]
    view = load_view((root / "snapshots/tools/read-edit-write/native.yaml").read_text())
    native = next(m["body"]["system"] for m in view["model"] if m.get("body"))
    head = system_prompt(DEFAULT_IDENTITY, DEFAULT_PERSONA, model="mock", cwd="/w")
    assert head is not None and native.startswith(head + "\n\n")
    paragraphs = native[len(head) + 2 :].split("\n\n")
    assert len(paragraphs) > 3
    assert (
        system_prompt(DEFAULT_IDENTITY, DEFAULT_PERSONA, *paragraphs, model="mock", cwd="/w")
        == native
    )
    assert system_prompt("I", "", "", "g1", "g2", model="m", cwd="/") == "I\n\ng1\n\ng2"


async def test_the_runtime_offers_the_configured_families_and_names_the_missing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = build({"builtin_tools": ["web", "fs"]}, tmp_path)
    with caplog.at_level(logging.WARNING):
        runtime = await build_runtime(config)
    assert [t.name for t in runtime.tools] == ["read", "write", "edit", "read_image"]
    assert "not implemented, none offered: web" in caplog.text
    none = await build_runtime(build({"builtin_tools": False}, tmp_path))
    assert none.tools == []

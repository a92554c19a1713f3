"""The default model fallback (docs/contract.md §6.7): with `provider`/`model` unset the
first catalog model is the route of `initialize`, the config options and new sessions;
a configured route wins; the native profile has no fallback."""

from __future__ import annotations

from typing import Any

from feature_support import exchange, kinds
from plus_agent import World, WorldFactory, raw_agent

from acp_plus.features.default_model import default_selection
from acp_plus.protocol.model_control import ModelEntry, ProviderCatalog, Selection

EYE = {"id": "eye", "name": "Eye", "contextWindow": 2048, "inputModalities": ["text", "image"]}
EAR = {"id": "ear", "name": "Ear", "contextWindow": 2048}
CATALOG: dict[str, Any] = {
    "providers": [
        {"id": "empty", "name": "Empty", "models": []},
        {"id": "vision", "name": "Vision", "models": [EYE, EAR]},
    ]
}


def test_default_selection_is_the_first_listed_model() -> None:
    catalog = [
        ProviderCatalog("a", "A"),
        ProviderCatalog("b", "B", (ModelEntry("m1", "M1"), ModelEntry("m2", "M2"))),
    ]
    assert default_selection(catalog) == Selection("b", "m1")
    assert default_selection([ProviderCatalog("a", "A")]) is None
    assert default_selection([]) is None


def _without_route(w: World, profile: str, route: str = "") -> None:
    # The world's config names a route; these tests need one that does not.
    lines = w.config.read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if not line.startswith(("provider =", "model =", "profile ="))]
    w.config.write_text(f'profile = "{profile}"\n{route}' + "\n".join(kept) + "\n", "utf-8")


async def _session(w: World) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    async with raw_agent(w) as agent:
        init = await agent.call("initialize", {"protocolVersion": 1})
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        session_id = new["result"]["sessionId"]
        answer, frames = await exchange(
            agent,
            await agent.request(
                "session/prompt",
                {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]},
            ),
        )
    return init["result"], new["result"], [answer, *frames]


async def test_the_first_catalog_model_is_the_default(world: WorldFactory) -> None:
    w = world(llm=[{"text": "hello", "usage": {"input": 3, "output": 2}}], catalog=CATALOG)
    _without_route(w, "plus")
    init, new, frames = await _session(w)
    assert init["agentCapabilities"]["promptCapabilities"]["image"] is True
    model = new["configOptions"][0]
    assert (model["id"], model["currentValue"]) == ("model", '["vision","eye"]')
    assert frames[0]["result"] == {"stopReason": "end_turn"}
    assert "usage_update" in kinds(frames[1:])  # the default's context window is known
    [request] = w.model_requests()
    assert (request["provider"], request["model"]) == ("vision", "eye")


async def test_a_configured_route_wins(world: WorldFactory) -> None:
    w = world(llm=[{"text": "hello"}], catalog=CATALOG)
    _without_route(w, "plus", 'provider = "vision"\nmodel = "ear"\n')
    init, new, _ = await _session(w)
    assert init["agentCapabilities"]["promptCapabilities"]["image"] is False
    assert new["configOptions"][0]["currentValue"] == '["vision","ear"]'
    assert w.model_requests()[0]["model"] == "ear"


async def test_the_native_profile_has_no_default(world: WorldFactory) -> None:
    w = world(catalog=CATALOG)
    _without_route(w, "native")
    init, new, frames = await _session(w)
    assert init["agentCapabilities"]["promptCapabilities"]["image"] is False
    assert new["configOptions"] == []
    assert frames[0]["error"]["message"] == (
        "Internal error: prompt was not queued: no model route is configured"
    )
    assert w.model_requests() == []

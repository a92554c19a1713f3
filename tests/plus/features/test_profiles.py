"""The one switch over every increment: `profile = "native" | "plus"` (docs/acp-plus.md).

In the native profile the wire is exactly native's: no `loadSession`, no
`additionalDirectories`, no `modes`, no `available_commands_update`, no steering
`_meta`, and the increments' methods are not registered (-32601). The plus profile
(the default) turns them all on; two of them have their own narrowing flag.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from plus_agent import WorldFactory, raw_agent

from acp_plus import features
from acp_plus.settings.config import build
from acp_plus.settings.config_schema import ConfigError

HOME = Path("/h")
NATIVE_CAPABILITIES = {
    "mcpCapabilities": {"http": True},
    "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
    "sessionCapabilities": {"close": {}, "list": {}, "resume": {}},
}


def test_the_switch_and_the_flags() -> None:
    plus = build({}, HOME)
    assert plus.profile == "plus" and plus.increments
    assert all(features.enabled(plus, name) for name in features.INCREMENTS)

    native = build({"profile": "native"}, HOME)
    assert not native.increments
    # The native profile wins over every flag, even one set explicitly.
    native_flags = build({"profile": "native", "enable_session_load": True}, HOME)
    assert not any(
        features.enabled(c, n) for c in (native, native_flags) for n in features.INCREMENTS
    )

    narrowed = build({"enable_session_load": False}, HOME)
    assert not features.enabled(narrowed, "session_load")
    assert features.enabled(narrowed, "additional_directories")
    assert features.enabled(narrowed, "steering")

    with pytest.raises(ValueError, match="unknown acp-plus increment"):
        features.enabled(plus, "session-load")
    with pytest.raises(ConfigError, match="profile: 'nativ' is not one of native, plus"):
        build({"profile": "nativ"}, HOME)


async def test_the_native_profile_wire_is_natives(world: WorldFactory) -> None:
    w = world(profile="native")
    async with raw_agent(w) as agent:
        init = await agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert init["result"] == {
            "protocolVersion": 1,
            "agentCapabilities": NATIVE_CAPABILITIES,
            "authMethods": [],
            "agentInfo": {"name": "dsh-acp-plus", "version": "0.1.0"},
        }
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        assert set(new["result"]) == {"sessionId", "configOptions"}
        assert all(o["id"] != "mode" for o in new["result"]["configOptions"])
        sid = new["result"]["sessionId"]
        for method in ("session/load", "session/set_mode", "_session/steering"):
            response = await agent.call(method, {"sessionId": sid})
            assert response["error"] == {
                "code": -32601,
                "message": f'"Method not found": {method}',
                "data": {"method": method},
            }
        # Nothing arrives on its own after session/new (no command list, §6.4).
        await asyncio.sleep(0.3)
        listed, unasked = await agent.until_response(await agent.request("session/list", {}))
        assert "result" in listed
        assert unasked == []


async def test_the_plus_profile_advertises_the_increments(world: WorldFactory) -> None:
    w = world()
    async with raw_agent(w) as agent:
        init = await agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        capabilities = init["result"]["agentCapabilities"]
        assert capabilities["loadSession"] is True
        assert capabilities["sessionCapabilities"]["additionalDirectories"] == {}
        # Everything native advertises is still there.
        for key, value in NATIVE_CAPABILITIES.items():
            assert value.items() <= capabilities[key].items()

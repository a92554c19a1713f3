"""configOptions and their mutations (§1.5)."""

from __future__ import annotations

from typing import Any

import pytest

from acp_plus.protocol import model_control as mc
from acp_plus.protocol.model_control import (
    Effort,
    ModelEntry,
    ProviderCatalog,
    Reasoning,
    Selection,
)
from acp_plus.wire.errors import RpcError

MOCK_CATALOG = (
    ProviderCatalog(
        "mock",
        "Mock",
        (ModelEntry("mock", "Mock Reasoner", "Mock model with selectable reasoning."),),
    ),
)
MOCK_REASONING = Reasoning((Effort("low", "Low"), Effort("high", "High")), default_effort="high")
NO_DEFAULT = Reasoning((Effort("low", "Low", "Less thought."), Effort("high", "High")))


def test_scenario_2_expected_config_options() -> None:
    """§7.4 scenario 2: the mock route with a default effort has no "Provider default"."""
    assert mc.config_options(Selection("mock", "mock"), MOCK_CATALOG, MOCK_REASONING) == [
        {
            "id": "model",
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": '["mock","mock"]',
            "options": [
                {
                    "group": "mock",
                    "name": "Mock",
                    "options": [
                        {
                            "value": '["mock","mock"]',
                            "name": "Mock Reasoner",
                            "description": "Mock model with selectable reasoning.",
                        }
                    ],
                }
            ],
        },
        {
            "id": "reasoning_effort",
            "name": "Reasoning effort",
            "category": "thought_level",
            "type": "select",
            "currentValue": "high",
            "options": [{"value": "low", "name": "Low"}, {"value": "high", "name": "High"}],
        },
    ]


def test_no_route_means_no_options() -> None:
    assert mc.config_options(None, MOCK_CATALOG, MOCK_REASONING) == []


def model_groups(selection: Selection, catalog: Any) -> list[dict[str, Any]]:
    options = mc.config_options(selection, catalog, None)
    assert [o["id"] for o in options] == ["model"]  # no reasoning declared: no effort option
    groups: list[dict[str, Any]] = options[0]["options"]
    return groups


def test_groups_follow_provider_order_and_empty_providers_are_dropped() -> None:
    catalog = (
        ProviderCatalog("b", "Bee", (ModelEntry("m1", "M One"), ModelEntry("m2", "M Two", "two"))),
        ProviderCatalog("empty", "Empty"),
        ProviderCatalog("a", "Ay", (ModelEntry("x", "X"),)),
    )
    assert model_groups(Selection("a", "x"), catalog) == [
        {
            "group": "b",
            "name": "Bee",
            "options": [
                {"value": '["b","m1"]', "name": "M One"},
                {"value": '["b","m2"]', "name": "M Two", "description": "two"},
            ],
        },
        {"group": "a", "name": "Ay", "options": [{"value": '["a","x"]', "name": "X"}]},
    ]


def test_unlisted_route_of_a_listed_provider_goes_first_in_its_group() -> None:
    groups = model_groups(Selection("mock", "secret"), MOCK_CATALOG)
    assert groups[0]["options"][0] == {"value": '["mock","secret"]', "name": "secret"}
    assert len(groups) == 1 and len(groups[0]["options"]) == 2


def test_unlisted_provider_gets_its_own_group_appended() -> None:
    groups = model_groups(Selection("private", 'unlisted"模型'), MOCK_CATALOG)
    assert groups[-1] == {
        "group": "private",
        "name": "private",
        "options": [{"value": '["private","unlisted\\"模型"]', "name": 'unlisted"模型'}],
    }


def test_failed_catalog_still_shows_the_current_route() -> None:
    # A provider whose catalog failed is passed with no models: its group is rebuilt
    # from the route alone, named by the provider id.
    groups = model_groups(Selection("mock", "mock"), (ProviderCatalog("mock", "Mock"),))
    assert groups == [
        {"group": "mock", "name": "mock", "options": [{"value": '["mock","mock"]', "name": "mock"}]}
    ]


@pytest.mark.parametrize(("effort", "current"), [(None, ""), ("low", "low"), ("high", "high")])
def test_reasoning_without_default_offers_provider_default(
    effort: str | None, current: str
) -> None:
    options = mc.config_options(Selection("mock", "mock", effort), MOCK_CATALOG, NO_DEFAULT)
    assert options[1] == {
        "id": "reasoning_effort",
        "name": "Reasoning effort",
        "category": "thought_level",
        "type": "select",
        "currentValue": current,
        "options": [
            {"value": "", "name": "Provider default"},
            {"value": "low", "name": "Low", "description": "Less thought."},
            {"value": "high", "name": "High"},
        ],
    }


@pytest.mark.parametrize(
    ("config_id", "value", "selection", "detail"),
    [
        ("model", False, Selection("mock", "mock"), "model requires a select value"),
        (
            "reasoning_effort",
            None,
            Selection("mock", "mock"),
            "reasoning_effort requires a select value",
        ),
        ("temperature", 0.5, Selection("mock", "mock"), "temperature requires a select value"),
        ("model", ["mock", "mock"], None, "model requires a select value"),
        ("model", "missing", None, "this session has no model selection"),
        ("reasoning_effort", "low", None, "this session has no model selection"),
        ("temperature", "1", None, "this session has no model selection"),
        (
            "model",
            '["mock","other"]',
            Selection("mock", "mock"),
            'unknown model option: ["mock","other"]',
        ),
        (
            "model",
            '["mock", "mock"]',
            Selection("mock", "mock"),
            'unknown model option: ["mock", "mock"]',
        ),
        ("model", "mock", Selection("mock", "mock"), "unknown model option: mock"),
        (
            "reasoning_effort",
            "extreme",
            Selection("mock", "mock"),
            "unknown reasoning effort for mock/mock: extreme",
        ),
        (
            "reasoning_effort",
            "High",
            Selection("mock", "mock"),
            "unknown reasoning effort for mock/mock: High",
        ),
        (
            "temperature",
            "1",
            Selection("mock", "mock"),
            "unknown session config option: temperature",
        ),
    ],
)
def test_refusal_texts(
    config_id: str, value: Any, selection: Selection | None, detail: str
) -> None:
    with pytest.raises(RpcError) as caught:
        mc.apply(selection, config_id, value, catalog=MOCK_CATALOG, reasoning=MOCK_REASONING)
    assert caught.value.to_json() == {"code": -32602, "message": f"Invalid params: {detail}"}


def test_effort_on_a_model_without_reasoning_is_unknown() -> None:
    with pytest.raises(RpcError) as caught:
        mc.apply(Selection("p", "m"), "reasoning_effort", "", catalog=(), reasoning=None)
    assert caught.value.message == "Invalid params: unknown reasoning effort for p/m: "


TWO = (
    ProviderCatalog(
        "mock", "Mock", (ModelEntry("mock", "Mock Reasoner"), ModelEntry("plain", "Mock Plain"))
    ),
)


def test_choosing_another_model_clears_the_explicit_effort() -> None:
    chosen = mc.apply(
        Selection("mock", "mock", "low"),
        "model",
        '["mock","plain"]',
        catalog=TWO,
        reasoning=MOCK_REASONING,
    )
    assert chosen == Selection("mock", "plain", None)


def test_choosing_the_same_model_clears_the_effort() -> None:
    # As native 0.2.1-rc.2 does (observed live: scenarios/sessions/config-options).
    same = mc.apply(
        Selection("mock", "mock", "low"),
        "model",
        '["mock","mock"]',
        catalog=TWO,
        reasoning=MOCK_REASONING,
    )
    assert same == Selection("mock", "mock", None)


def test_the_unlisted_current_route_is_selectable() -> None:
    current = Selection("private", "x", "low")
    chosen = mc.apply(current, "model", '["private","x"]', catalog=TWO, reasoning=None)
    assert chosen == Selection("private", "x")


def test_effort_changes_and_provider_default() -> None:
    low = mc.apply(
        Selection("mock", "mock"),
        "reasoning_effort",
        "low",
        catalog=MOCK_CATALOG,
        reasoning=MOCK_REASONING,
    )
    assert low == Selection("mock", "mock", "low")
    back = mc.apply(low, "reasoning_effort", "", catalog=MOCK_CATALOG, reasoning=MOCK_REASONING)
    assert back == Selection("mock", "mock", None)
    # the model's default effort is materialized in the option, not stored as explicit
    options = mc.config_options(back, MOCK_CATALOG, MOCK_REASONING)
    assert options[1]["currentValue"] == "high"


@pytest.mark.parametrize(
    ("selection", "reasoning", "effort", "explicit"),
    [
        (Selection("mock", "mock"), MOCK_REASONING, "high", False),
        (Selection("mock", "mock", "low"), MOCK_REASONING, "low", True),
        (Selection("mock", "mock"), NO_DEFAULT, None, False),
        (Selection("p", "m"), None, None, False),
    ],
)
def test_route_event_and_effort_resolution(
    selection: Selection, reasoning: Reasoning | None, effort: str | None, explicit: bool
) -> None:
    assert mc.resolved_effort(selection, reasoning) == effort
    assert mc.route_event(selection, reasoning) == {
        "type": "route/set",
        "provider": selection.provider,
        "model": selection.model,
        "effort": effort,
        "explicitEffort": explicit,
    }


DEPLOYMENT = Selection("deepseek-official", "deepseek-v4-flash")


@pytest.mark.parametrize(
    ("logged", "restored"),
    [
        (None, DEPLOYMENT),
        (
            {
                "type": "route/set",
                "provider": "p",
                "model": "m",
                "effort": "low",
                "explicitEffort": True,
            },
            Selection("p", "m", "low"),
        ),
        (
            {
                "type": "route/set",
                "provider": "p",
                "model": "m",
                "effort": "high",
                "explicitEffort": False,
            },
            Selection("p", "m"),
        ),
        (
            {
                "type": "route/set",
                "provider": "p",
                "model": "m",
                "effort": None,
                "explicitEffort": False,
            },
            Selection("p", "m"),
        ),
        ({"type": "route/set", "provider": "p"}, DEPLOYMENT),
    ],
)
def test_resume_restores_the_logged_route(
    logged: dict[str, Any] | None, restored: Selection
) -> None:
    assert mc.restore(logged, DEPLOYMENT) == restored


def test_resume_without_log_or_deployment_has_no_route() -> None:
    assert mc.restore(None, None) is None

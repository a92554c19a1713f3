"""Model route selection as ACP `configOptions` (§1.5).

Plain data in, plain data out: the core lists the provider catalogs and resolves the
selected model's reasoning declaration (both I/O), then these functions build the
options, apply `session/set_config_option` values, and restore a route on resume.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from acp_plus.core.js_json import js_json
from acp_plus.wire.errors import invalid_params

MODEL = "model"
REASONING_EFFORT = "reasoning_effort"


@dataclass(frozen=True)
class ModelEntry:
    """One model of a provider's catalog."""

    id: str
    name: str
    description: str | None = None


@dataclass(frozen=True)
class ProviderCatalog:
    """A provider and its listed models (empty when its catalog failed to load)."""

    id: str
    name: str
    models: tuple[ModelEntry, ...] = ()


@dataclass(frozen=True)
class Effort:
    """A reasoning effort a model declares."""

    id: str
    name: str
    description: str | None = None


@dataclass(frozen=True)
class Reasoning:
    """A model's reasoning declaration: its efforts and optional default effort."""

    efforts: tuple[Effort, ...]
    default_effort: str | None = None


@dataclass(frozen=True)
class Selection:
    """The session's route. `effort` is the explicitly chosen effort; None means the
    provider default."""

    provider: str
    model: str
    effort: str | None = None


def route_value(provider: str, model: str) -> str:
    """An option value: the compact JSON text of `[provider, model]`."""
    return js_json([provider, model])


def resolved_effort(selection: Selection, reasoning: Reasoning | None) -> str | None:
    """The effort a turn runs with: the explicit one, else the model's default, else None."""
    if reasoning is None:
        return None
    return selection.effort if selection.effort is not None else reasoning.default_effort


def _entry(value: str, name: str, description: str | None) -> dict[str, Any]:
    entry = {"value": value, "name": name}
    if description is not None:
        entry["description"] = description
    return entry


def _model_groups(selection: Selection, catalog: Sequence[ProviderCatalog]) -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = []
    listed = False
    for provider in catalog:
        if not provider.models:
            continue  # a provider with no models (or a failed catalog) shows no group
        options = [
            _entry(route_value(provider.id, m.id), m.name, m.description) for m in provider.models
        ]
        groups.append({"group": provider.id, "name": provider.name, "options": options})
        listed = listed or (
            provider.id == selection.provider
            and any(m.id == selection.model for m in provider.models)
        )
    if not listed:
        # The current route is always selectable, even when no catalog lists it.
        current = _entry(route_value(selection.provider, selection.model), selection.model, None)
        own = next((g for g in groups if g["group"] == selection.provider), None)
        if own is not None:
            own["options"].insert(0, current)
        else:
            groups.append(
                {"group": selection.provider, "name": selection.provider, "options": [current]}
            )
    return groups


def config_options(
    selection: Selection | None,
    catalog: Sequence[ProviderCatalog],
    reasoning: Reasoning | None,
) -> list[dict[str, Any]]:
    """The session's `configOptions`: `[]` without a route; the `model` option; and the
    `reasoning_effort` option when the resolved model declares reasoning (`reasoning`
    None also covers a route that no longer resolves)."""
    if selection is None:
        return []
    options: list[dict[str, Any]] = [
        {
            "id": MODEL,
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": route_value(selection.provider, selection.model),
            "options": _model_groups(selection, catalog),
        }
    ]
    if reasoning is not None:
        efforts = [_entry(e.id, e.name, e.description) for e in reasoning.efforts]
        if reasoning.default_effort is None:
            efforts.insert(0, {"value": "", "name": "Provider default"})
        options.append(
            {
                "id": REASONING_EFFORT,
                "name": "Reasoning effort",
                "category": "thought_level",
                "type": "select",
                "currentValue": resolved_effort(selection, reasoning) or "",
                "options": efforts,
            }
        )
    return options


def _routes(selection: Selection, catalog: Sequence[ProviderCatalog]) -> dict[str, Selection]:
    routes = {route_value(p.id, m.id): Selection(p.id, m.id) for p in catalog for m in p.models}
    routes.setdefault(
        route_value(selection.provider, selection.model),
        Selection(selection.provider, selection.model),
    )
    return routes


def apply(
    selection: Selection | None,
    config_id: str,
    value: Any,
    *,
    catalog: Sequence[ProviderCatalog],
    reasoning: Reasoning | None,
) -> Selection:
    """The selection after `session/set_config_option{configId, value}`; raises the
    -32602 RpcError with the exact §1.5 detail for a refused value.

    `reasoning` is the current model's declaration. Choosing a model, even the current
    one, clears the explicit effort (the caller then resolves the new model's reasoning); `""` for
    `reasoning_effort` returns to the provider default.
    """
    if not isinstance(value, str):
        raise invalid_params(f"{config_id} requires a select value")
    if selection is None:
        raise invalid_params("this session has no model selection")
    if config_id == MODEL:
        chosen = _routes(selection, catalog).get(value)
        if chosen is None:
            raise invalid_params(f"unknown model option: {value}")
        # Any model choice, the current one included, drops the explicit effort: native
        # 0.2.1-rc.2 replaces its whole selection with the chosen route
        # (scenarios/sessions/config-options).
        return Selection(chosen.provider, chosen.model)
    if config_id == REASONING_EFFORT:
        known = reasoning is not None and (
            value == "" or any(e.id == value for e in reasoning.efforts)
        )
        if not known:
            raise invalid_params(
                f"unknown reasoning effort for {selection.provider}/{selection.model}: {value}"
            )
        return replace(selection, effort=value or None)
    raise invalid_params(f"unknown session config option: {config_id}")


def route_event(selection: Selection, reasoning: Reasoning | None) -> dict[str, Any]:
    """The `route/set` event fixing a turn's route at admission."""
    return {
        "type": "route/set",
        "provider": selection.provider,
        "model": selection.model,
        "effort": resolved_effort(selection, reasoning),
        "explicitEffort": selection.effort is not None,
    }


def restore(last_route: Mapping[str, Any] | None, deployment: Selection | None) -> Selection | None:
    """The selection a resumed session starts with: the last logged `route/set` (keeping
    its effort only when it was chosen explicitly), else the deployment route."""
    if last_route is None:
        return deployment
    provider, model = last_route.get("provider"), last_route.get("model")
    if not (isinstance(provider, str) and isinstance(model, str)):
        return deployment
    effort = last_route.get("effort")
    explicit = last_route.get("explicitEffort") is True and isinstance(effort, str)
    return Selection(provider, model, effort if explicit else None)

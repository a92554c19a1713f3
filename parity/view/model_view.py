"""The model part of a normalized view, for `parity show`.

A view's `model` list holds every request that reached the fake LLM: what the agent made
the model see. `parity show` leaves it out unless asked (`--model`), and then prints only
it. Agents send the same tool schemas with every request, often kilobytes each time, so
each distinct tool list is printed once, at the first request that sent it; a later
request with an identical list reads `tools: same as model[i]`. Pure functions over views.
"""

from __future__ import annotations

from typing import Any

MODEL = "model"


def without_model(view: Any) -> Any:
    """The view without its model requests (the view itself is left as it was)."""
    if not isinstance(view, dict):
        return view
    return {key: value for key, value in view.items() if key != MODEL}


def model_requests(view: Any) -> list[Any]:
    """The view's model requests, each repeated tool list replaced by a reference to the
    first request that sent it. Absent or empty tool lists are kept as they are."""
    requests = view.get(MODEL) if isinstance(view, dict) else None
    if not isinstance(requests, list):
        return []
    first: list[tuple[Any, int]] = []
    """Each distinct non-empty tool list and the index of the request that sent it."""
    out: list[Any] = []
    for index, request in enumerate(requests):
        body = request.get("body") if isinstance(request, dict) else None
        tools = body.get("tools") if isinstance(body, dict) else None
        if not tools:
            out.append(request)
            continue
        seen = next((i for known, i in first if known == tools), None)
        if seen is None:
            first.append((tools, index))
            out.append(request)
        else:
            assert isinstance(request, dict) and isinstance(body, dict)
            out.append({**request, "body": {**body, "tools": f"same as {MODEL}[{seen}]"}})
    return out


def model_view(view: Any) -> dict[str, Any]:
    """What `parity show --model` prints: `{"model": model_requests(view)}`."""
    return {MODEL: model_requests(view)}

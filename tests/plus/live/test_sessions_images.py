"""§5 image admission inside `LiveSession`: the route checks and cancellation around the
write, which the real process cannot reach on demand (a catalog that fails mid-session,
a cancel between route check and write)."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from acp_plus.core.attachments import AttachmentStore
from acp_plus.live.sessions import LiveSession, ResolveModalities
from acp_plus.protocol import model_control
from acp_plus.wire.errors import RpcError
from acp_plus.wire.rpc import RequestContext

MOCK = model_control.Selection("mock", "mock")
IMAGE = [{"type": "image", "mimeType": "image/png", "data": base64.b64encode(b"px").decode()}]


async def _send(_update: dict[str, Any]) -> None:
    return None


async def _no_client(_method: str, _params: Any) -> Any:
    raise AssertionError("no client request expected")


def session(
    store: AttachmentStore | None,
    resolve: ResolveModalities | None,
    selection: model_control.Selection | None = MOCK,
) -> LiveSession:
    live = LiveSession(
        "s-1",
        "/tmp",
        send=_send,
        client_request=_no_client,
        image_advertised=lambda: True,
        attachments=store,
        resolve_modalities=resolve,
    )
    live.selection = selection
    return live


async def vision(_provider: str, _model: str) -> Sequence[str] | None:
    return ["text", "image"]


async def failing(_provider: str, _model: str) -> Sequence[str] | None:
    raise RuntimeError("catalog unreachable")


async def undeclared(_provider: str, _model: str) -> Sequence[str] | None:
    return None


@pytest.mark.parametrize(
    ("mounted", "resolve", "selection", "code", "message"),
    [
        (
            False,
            vision,
            MOCK,
            -32602,
            "no attachment store is mounted",
        ),
        (
            True,
            vision,
            None,
            -32602,
            "the current model route could not be resolved for image input",
        ),
        (
            True,
            None,
            MOCK,
            -32602,
            "the current model route could not be resolved for image input",
        ),
        (
            True,
            failing,
            MOCK,
            -32603,
            "the current model route could not be verified for image input",
        ),
        (
            True,
            undeclared,
            model_control.Selection("mock", "m2"),
            -32602,
            'model "m2" does not declare image input',
        ),
    ],
)
async def test_route_refusals(
    tmp_path: Path,
    mounted: bool,
    resolve: ResolveModalities | None,
    selection: model_control.Selection | None,
    code: int,
    message: str,
) -> None:
    store = AttachmentStore.under_home(tmp_path) if mounted else None
    live = session(store, resolve, selection)
    with pytest.raises(RpcError) as caught:
        await live.prompt(IMAGE, RequestContext(1))
    prefix = "Invalid params" if code == -32602 else "Internal error"
    assert (caught.value.code, caught.value.message) == (code, f"{prefix}: {message}")
    assert live.run is None  # the slot is freed
    assert not (tmp_path / "attachments").exists()


async def test_cancel_before_the_write_settles_cancelled_and_saves_nothing(
    tmp_path: Path,
) -> None:
    entered, release = asyncio.Event(), asyncio.Event()

    async def slow(_provider: str, _model: str) -> Sequence[str] | None:
        entered.set()
        await release.wait()
        return ["text", "image"]

    live = session(AttachmentStore.under_home(tmp_path), slow)
    prompt = asyncio.create_task(live.prompt(IMAGE, RequestContext(1)))
    await entered.wait()
    # A second prompt during image admission finds the slot taken (§5).
    with pytest.raises(RpcError, match="a prompt is already in flight for this session"):
        await live.prompt(IMAGE, RequestContext(2))
    live.cancel()
    release.set()
    assert await prompt == {"stopReason": "cancelled"}
    assert not (tmp_path / "attachments").exists()


async def test_abort_of_the_request_during_admission_is_a_cancel(tmp_path: Path) -> None:
    entered, release = asyncio.Event(), asyncio.Event()

    async def slow(_provider: str, _model: str) -> Sequence[str] | None:
        entered.set()
        await release.wait()
        raise RuntimeError("late failure")

    live = session(AttachmentStore.under_home(tmp_path), slow)
    ctx = RequestContext(1)
    prompt = asyncio.create_task(live.prompt(IMAGE, ctx))
    await entered.wait()
    ctx.aborted.set()  # `$/cancel_request`
    await asyncio.sleep(0)
    release.set()
    # A refusal after a cancel settles as `cancelled` (§5 failure mapping).
    assert await prompt == {"stopReason": "cancelled"}

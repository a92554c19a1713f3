"""Prompt content admission (§5): every refusal text, the rebuild, and the storage checks."""

from __future__ import annotations

from typing import Any

import pytest

from acp_plus.protocol import content
from acp_plus.protocol.content import ContentError

PNG = "iVBORw0KGgo="  # the 8-byte PNG signature, canonical base64


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def image(data: str = PNG, mime_type: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "mimeType": mime_type, "data": data}


def link(name: str, uri: str) -> dict[str, Any]:
    return {"type": "resource_link", "name": name, "uri": uri}


def refusal(blocks: list[Any], image_advertised: bool = True) -> ContentError:
    with pytest.raises(ContentError) as caught:
        content.admit(blocks, image_advertised=image_advertised)
    return caught.value


@pytest.mark.parametrize(
    ("label", "blocks", "advertised", "message"),
    [
        (
            "image not advertised",
            [text("look"), image()],
            False,
            "inline image prompts were not advertised by this connection",
        ),
        (
            "svg",
            [image(mime_type="image/svg+xml")],
            True,
            "image mimeType must be image/png, image/jpeg, image/webp, or image/gif",
        ),
        (
            "missing mimeType",
            [{"type": "image", "data": PNG}],
            True,
            "image mimeType must be image/png, image/jpeg, image/webp, or image/gif",
        ),
        ("whitespace", [image("iVBORw0K Ggo=")], True, "image data must be canonical base64"),
        ("newline", [image("iVBORw0K\nGgo=")], True, "image data must be canonical base64"),
        ("url-safe alphabet", [image("ab-_")], True, "image data must be canonical base64"),
        ("missing padding", [image("iVBORw0KGgo")], True, "image data must be canonical base64"),
        ("extra padding", [image("iVBORw0KGgo==")], True, "image data must be canonical base64"),
        ("non-zero pad bits", [image("iVBORw0KGgp=")], True, "image data must be canonical base64"),
        ("data not a string", [image(data=None)], True, "image data must be canonical base64"),  # type: ignore[arg-type]
        (
            "audio",
            [{"type": "audio", "mimeType": "audio/wav", "data": "AAAA"}],
            True,
            "audio prompt content is not supported",
        ),
        (
            "embedded resource",
            [{"type": "resource", "resource": {"uri": "file:///a", "text": "x"}}],
            True,
            "embedded resource prompt content is not supported",
        ),
        ("unknown type", [{"type": "video"}], True, "unsupported ACP prompt content"),
        ("no type", [{"text": "hi"}], True, "unsupported ACP prompt content"),
        ("not an object", ["hi"], True, "unsupported ACP prompt content"),
        (
            "text not a string",
            [{"type": "text", "text": 3}],
            True,
            "unsupported ACP prompt content",
        ),
        ("empty", [], True, "empty prompt"),
        ("blank text", [text("")], True, "empty prompt"),
        (
            "js whitespace",
            [text(" \t\n\r\v\f\u00a0\u2003\u2028\ufeff\u3000")],
            True,
            "empty prompt",
        ),
        ("several blank texts", [text(" "), text("\n")], True, "empty prompt"),
    ],
)
def test_refusal_texts(label: str, blocks: list[Any], advertised: bool, message: str) -> None:
    error = refusal(blocks, advertised)
    assert (error.kind, error.message) == ("invalid", message), label
    assert error.to_rpc().to_json() == {"code": -32602, "message": f"Invalid params: {message}"}


def test_first_bad_block_in_wire_order_decides() -> None:
    audio = {"type": "audio", "mimeType": "audio/wav", "data": "AAAA"}
    assert refusal([audio, image()], False).message == "audio prompt content is not supported"
    assert refusal([image(), audio], False).message == content.NOT_ADVERTISED


def test_one_bad_image_rejects_the_whole_batch() -> None:
    assert refusal([image(), image("bad!")]).message == content.BAD_BASE64


def test_advertisement_is_checked_before_the_image_fields() -> None:
    assert refusal([image("bad!", "image/bmp")], False).message == content.NOT_ADVERTISED


@pytest.mark.parametrize("mime_type", content.IMAGE_MIME_TYPES)
def test_each_raster_type_is_accepted(mime_type: str) -> None:
    admitted = content.admit([image(mime_type=mime_type)], image_advertised=True)
    assert admitted == [{"type": "image", "mimeType": mime_type, "data": PNG}]


def test_empty_image_data_is_canonical() -> None:
    # "" decodes to no bytes and re-encodes to "", as Buffer does; the store judges size.
    assert content.admit([image("")], image_advertised=True)[0]["data"] == ""


def test_consecutive_text_joins_without_separator() -> None:
    assert content.admit([text("a"), text("b"), text(" c")], image_advertised=False) == [
        text("ab c")
    ]


def test_resource_link_renders_as_contract_example() -> None:
    admitted = content.admit(
        [text("summarize"), link("notes.txt", "file:///tmp/notes.txt")], image_advertised=False
    )
    assert admitted == [
        text('summarize\n[resource_link name="notes.txt" uri="file:///tmp/notes.txt"]\n')
    ]


def test_resource_link_quotes_like_json_stringify() -> None:
    rendered = content.render_resource_link('a "b"\\', "file:///x\ty")
    assert rendered == '\n[resource_link name="a \\"b\\"\\\\" uri="file:///x\\ty"]\n'


def test_a_lone_resource_link_is_not_empty() -> None:
    assert content.admit([link("n", "u")], image_advertised=False) == [
        text('\n[resource_link name="n" uri="u"]\n')
    ]


def test_images_flush_text_and_keep_wire_order() -> None:
    admitted = content.admit(
        [text("one"), link("n", "u"), image(), image(mime_type="image/gif"), text("two")],
        image_advertised=True,
    )
    assert admitted == [
        text('one\n[resource_link name="n" uri="u"]\n'),
        image(),
        image(mime_type="image/gif"),
        text("two"),
    ]


def test_whitespace_text_beside_an_image_is_kept_and_not_empty() -> None:
    assert content.admit([text(" "), image()], image_advertised=True) == [text(" "), image()]


def test_text_that_python_calls_whitespace_but_js_does_not_is_content() -> None:
    # U+001C is whitespace to str.isspace but not to String.prototype.trim.
    assert content.admit([text("\x1c")], image_advertised=False) == [text("\x1c")]


def test_images_batch_and_digests() -> None:
    admitted = content.admit(
        [text("a"), image(), image(mime_type="image/gif")], image_advertised=True
    )
    assert content.images(admitted) == [
        ("image/png", b"\x89PNG\r\n\x1a\n"),
        ("image/gif", b"\x89PNG\r\n\x1a\n"),
    ]
    logged = content.with_digests(admitted, ["d1", "d2"])
    assert logged == [
        text("a"),
        {"type": "image", "mimeType": "image/png", "digest": "d1"},
        {"type": "image", "mimeType": "image/gif", "digest": "d2"},
    ]
    assert "data" not in str(logged)  # base64 never reaches the log
    with pytest.raises(ValueError):
        content.with_digests(admitted, ["d1"])
    with pytest.raises(ValueError):
        content.with_digests(admitted, ["d1", "d2", "d3"])


def test_storage_checks() -> None:
    content.check_image_store(True)
    with pytest.raises(ContentError) as no_store:
        content.check_image_store(False)
    assert (no_store.value.kind, no_store.value.message) == (
        "invalid",
        "no attachment store is mounted",
    )


@pytest.mark.parametrize(
    ("provider", "model", "llm_mounted"),
    [(None, "m", True), ("p", None, True), ("p", "m", False), ("", "m", True)],
)
def test_unresolvable_route(provider: str | None, model: str | None, llm_mounted: bool) -> None:
    with pytest.raises(ContentError) as caught:
        content.image_route(provider, model, llm_mounted=llm_mounted)
    assert caught.value.to_rpc().to_json() == {
        "code": -32602,
        "message": "Invalid params: the current model route could not be resolved for image input",
    }


def test_route_checks() -> None:
    assert content.image_route("p", "m", llm_mounted=True) == ("p", "m")
    assert content.route_unverified().to_rpc().to_json() == {
        "code": -32603,
        "message": "Internal error: the current model route could not be verified for image input",
    }
    content.check_image_modalities("m", ["text", "image"])
    for modalities in (["text"], None, []):
        with pytest.raises(ContentError) as caught:
            content.check_image_modalities("deepseek-v4", modalities)
        assert caught.value.message == 'model "deepseek-v4" does not declare image input'
        assert caught.value.kind == "invalid"


def test_store_failures() -> None:
    policy = content.store_failure("image exceeds 1024 bytes", policy=True)
    assert policy.to_rpc().to_json() == {
        "code": -32602,
        "message": "Invalid params: image exceeds 1024 bytes",
    }
    other = content.store_failure("disk full", policy=False)
    assert other.to_rpc().to_json() == {
        "code": -32603,
        "message": "Internal error: unable to persist the prompt image batch",
    }

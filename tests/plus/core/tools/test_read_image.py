"""`read_image` and the image facts it reads (scenarios/tools/read-image*.yaml show the
rest live against native 0.2.1-rc.2)."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

import pytest

from acp_plus.core.tools.base import ToolContext
from acp_plus.core.tools.fs_family import fs_tools
from acp_plus.core.tools.image_file import MALFORMED, ImageDataError, ImageFacts, inspect
from acp_plus.core.tools.read_image import ReadImageTool, read_image_tools

PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)


def _chunk(tag: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body))


def _png(width: int, height: int, rows: bytes | None = None) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit grey
    pixels = rows if rows is not None else b"".join(b"\0" + b"\x80" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(pixels))
        + _chunk(b"IEND", b"")
    )


def test_each_format_names_its_type_and_size() -> None:
    assert inspect(PIXEL) == ImageFacts("image/png", 1, 1)
    assert inspect(_png(3, 2)) == ImageFacts("image/png", 3, 2)
    jpeg = b"\xff\xd8\xff\xe0" + struct.pack(">H", 4) + b"JF" + b"\xff\xc0\x00\x11\x08"
    assert inspect(jpeg + struct.pack(">HH", 40, 30) + b"\x03") == ImageFacts("image/jpeg", 30, 40)
    gif = b"GIF89a" + struct.pack("<HH", 5, 7) + b"\0\0\0;"
    assert inspect(gif) == ImageFacts("image/gif", 5, 7)
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\0" * 4 + (99).to_bytes(3, "little") * 2
    webp = b"RIFF" + struct.pack("<I", 4 + len(vp8x)) + b"WEBP" + vp8x
    assert inspect(webp) == ImageFacts("image/webp", 100, 100)


@pytest.mark.parametrize(
    "data",
    [
        PIXEL[:-20],  # cut in its pixel data
        PIXEL[:30] + b"\0" + PIXEL[31:],  # a chunk whose CRC no longer holds
        _png(4, 4, rows=b"\0\x80"),  # rows missing
        b"GIF89a-no",
        b"\xff\xd8\xff\xd9",
        b"RIFF\xff\0\0\0WEBPVP8 ",
        b"hello",
    ],
)
def test_bytes_that_do_not_decode_are_malformed(data: bytes) -> None:
    with pytest.raises(ImageDataError, match=MALFORMED):
        inspect(data)


def _tool(tmp_path: Path) -> ReadImageTool:
    (image,) = read_image_tools(fs_tools(tmp_path / "home")[0])
    assert isinstance(image, ReadImageTool)
    return image


def _ctx(tmp_path: Path, images: bool = True) -> ToolContext:
    return ToolContext("s", tmp_path, "c1", 1, "workspace-write", "mock", images)


async def _text(tool: ReadImageTool, path: str, ctx: ToolContext) -> str:
    result = await tool.run({"file_path": path}, ctx)
    assert result.is_error
    return str(result.content[0]["text"])


async def test_the_image_comes_with_natives_envelope(tmp_path: Path) -> None:
    (tmp_path / "p.PNG").write_bytes(PIXEL)
    tool = _tool(tmp_path)
    result = await tool.run({"file_path": "p.PNG"}, _ctx(tmp_path))
    assert not result.is_error
    key = (tmp_path / "p.PNG").resolve()
    assert result.content == [
        {
            "type": "text",
            "text": f"<path>{key}</path>\n<type>image</type>\n<content>\nimage/png image, "
            "1x1 px, 70 bytes\n</content>",
        },
        {"type": "image", "data": base64.b64encode(PIXEL).decode(), "mimeType": "image/png"},
    ]
    # Read is seen: the fs-observation-policy lets this session replace it.
    assert tool.seen.get("s", str(key)) is not None


async def test_natives_refusals_in_its_order(tmp_path: Path) -> None:
    tool = _tool(tmp_path)
    gif = b"GIF89a" + struct.pack("<HH", 9000, 1) + b"\0\0\0;"
    (tmp_path / "wide.gif").write_bytes(gif)
    (tmp_path / "gif.png").write_bytes(b"GIF89a" + struct.pack("<HH", 1, 1) + b"\0\0\0;")
    (tmp_path / "empty.png").write_bytes(b"")
    (tmp_path / "dir.png").mkdir()
    text_only = _ctx(tmp_path, images=False)
    assert await _text(tool, "x.txt", text_only) == (
        'Error: cannot read "x.txt": the .txt extension does not declare a supported image '
        "format; read_image accepts PNG/JPEG/WebP/GIF files, including extension-less files "
        "in those formats"
    )
    assert await _text(tool, "wide.gif", text_only) == (
        'Error: cannot read "wide.gif" as an image: model "mock" does not declare image '
        "input; switch to an image-capable model to read images"
    )
    ctx = _ctx(tmp_path)
    assert await _text(tool, "wide.gif", ctx) == (
        f'Error: cannot read "{tmp_path}/wide.gif": at least one image side exceeds the '
        "8192px limit; downscale the image and read the smaller copy"
    )
    assert await _text(tool, "gif.png", ctx) == (
        f'Error: cannot read "{tmp_path}/gif.png": the .png extension declares image/png, '
        "but the bytes use a different image format; rename the file to match its actual "
        "format if it is PNG/JPEG/WebP/GIF, or convert it to one of those formats"
    )
    assert await _text(tool, "empty.png", ctx) == "Error: Image is empty."
    assert await _text(tool, "dir.png", ctx) == (
        f'Error: cannot read "{tmp_path}/dir.png": not a regular file'
    )
    assert await _text(tool, " ", ctx) == "Error: file_path must be a non-empty string"
    refused = await _text(tool, "home/x.png", ctx)
    assert refused.startswith("Error: refused: home/x.png is")

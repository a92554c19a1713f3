"""Native's `read_image` (the fs family's fourth tool): an image file handed to the model.

DeepSeek Harness 0.2.1-rc.2's, text for text: its definition, its checks in its order
(a non-empty path; an extension that declares an image, or none; a model that declares
image input; a regular file; at most 20 MiB; a signature or extension naming PNG, JPEG,
WebP or GIF; bytes that decode as that type within 8192 pixels a side and 64,000,000
pixels), its error texts, and its result: a text envelope naming the file, its type,
size in pixels and bytes, beside the image block itself. Reading an image records the
file as seen, as `read` does (the fs-observation-policy, `fs_family.py`).

Where acp-plus differs, having no image library (docs/acp-plus.md, "Built-in tools"):
native stores each image normalized, which passes a clean 8-bit sRGB PNG, JPEG or WebP
within its limits through unchanged and re-encodes any other (a GIF, an animation, one
carrying metadata, a 16-bit PNG, one past its normalization limits) as JPEG or WebP,
downscaled; acp-plus hands the model the file's own bytes.
"""

from __future__ import annotations

import asyncio
import base64
import posixpath
from pathlib import Path
from typing import Any, ClassVar

from acp_plus.core.js_json import js_trim
from acp_plus.core.tools.arg_schema import invalid_arguments
from acp_plus.core.tools.base import Tool, ToolContext, ToolResult
from acp_plus.core.tools.fs_family import Refused, _FsTool
from acp_plus.core.tools.fs_paths import Target, probe
from acp_plus.core.tools.fs_text import FsError
from acp_plus.core.tools.image_file import (
    IMAGE_EXTENSIONS,
    MAX_IMAGE_BYTES,
    MAX_IMAGE_DIMENSION,
    MAX_IMAGE_PIXELS,
    ImageDataError,
    ImageFacts,
    inspect,
    sniff,
)


class ReadImageTool(_FsTool):
    """Native's `read_image`: a PNG/JPEG/WebP/GIF file as an image block."""

    name = "read_image"
    concurrency_safe = True  # native runs it beside its neighbours (tool_schedule.py)
    description = (
        "Read a PNG/JPEG/WebP/GIF file and return the image itself. Large images are "
        "downscaled automatically; do not install image libraries or create thumbnails to "
        "inspect an image."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "Path to the image file, resolved by the filesystem backend.",
            },
        },
        "required": ["file_path"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The image and its envelope, the file recorded as seen; else native's error."""
        invalid = invalid_arguments(self.parameters, args)
        if invalid is not None:
            return ToolResult.text(f"Error: {invalid}", is_error=True)
        try:
            target, version, data, facts = await self._read(args["file_path"], ctx)
        except (FsError, Refused, ValueError) as exc:
            return ToolResult.text(f"Error: {exc}", is_error=True)
        self.seen.record(ctx.session_id, target.key, version)
        envelope = (
            f"<path>{target.key}</path>\n<type>image</type>\n<content>\n{facts.media_type} "
            f"image, {facts.width}x{facts.height} px, {len(data)} bytes\n</content>"
        )
        image = base64.b64encode(data).decode("ascii")
        return ToolResult(
            [
                {"type": "text", "text": envelope},
                {"type": "image", "data": image, "mimeType": facts.media_type},
            ]
        )

    async def _read(
        self, path: str, ctx: ToolContext
    ) -> tuple[Target, str | None, bytes, ImageFacts]:
        if not js_trim(path):
            raise ValueError("file_path must be a non-empty string")
        extension = _extension(path)
        declared = IMAGE_EXTENSIONS.get(extension)
        if declared is None and extension:
            raise ValueError(
                f'cannot read "{path}": the {extension} extension does not declare a '
                "supported image format; read_image accepts PNG/JPEG/WebP/GIF files, "
                "including extension-less files in those formats"
            )
        if not ctx.image_input:
            raise ValueError(
                f'cannot read "{path}" as an image: model "{ctx.model}" does not declare '
                "image input; switch to an image-capable model to read images"
            )
        target = self.target(path, ctx)
        info = probe(target.key)
        if info is None:
            self.seen.record(ctx.session_id, target.key, None)
            raise FsError(f'cannot read "{target.display}": not found', "FS_NOT_FOUND")
        if info.kind != "file":
            raise FsError(f'cannot read "{target.display}": not a regular file')
        data = await asyncio.to_thread(_read_capped, target)
        media_type = declared or sniff(data)
        if media_type is None:
            raise ValueError(
                f'cannot read "{target.display}": the file content is not a supported image '
                "format; read_image accepts PNG/JPEG/WebP/GIF"
            )
        return target, info.version, data, _admit(data, media_type, declared, target, extension)


def _extension(path: str) -> str:
    """Node's `extname`, lowercased: a leading dot alone names no extension."""
    return posixpath.splitext(posixpath.basename(path))[1].lower()


def _read_capped(target: Target) -> bytes:
    size = Path(target.key).stat().st_size
    if size > MAX_IMAGE_BYTES:
        raise FsError(
            f'cannot read "{target.display}": {size} bytes exceeds the '
            f"{MAX_IMAGE_BYTES}-byte limit",
            "FS_TOO_LARGE",
        )
    with open(target.key, "rb") as f:
        data = f.read(MAX_IMAGE_BYTES + 1)
    if len(data) > MAX_IMAGE_BYTES:
        raise FsError(
            f'cannot read "{target.display}": content exceeds the {MAX_IMAGE_BYTES}-byte limit',
            "FS_TOO_LARGE",
        )
    return data


def _admit(
    data: bytes, media_type: str, declared: str | None, target: Target, extension: str
) -> ImageFacts:
    """Native's attachment admission, in its order, each failure in its words."""
    where = f'cannot read "{target.display}"'
    if not data:  # only a declared type gets here: an empty file has no signature
        raise ValueError("Image is empty.")
    try:
        facts = inspect(data)
    except ImageDataError as exc:
        if declared is None:
            raise ValueError(
                f"{where}: the bytes do not decode as a supported PNG/JPEG/WebP/GIF image; "
                "the file may be truncated or corrupt"
            ) from exc
        raise
    if facts.width * facts.height > MAX_IMAGE_PIXELS:
        raise ValueError(
            f"{where}: the image exceeds the {MAX_IMAGE_PIXELS}-pixel decoded-size limit; "
            "downscale the image and read the smaller copy"
        )
    if max(facts.width, facts.height) > MAX_IMAGE_DIMENSION:
        raise ValueError(
            f"{where}: at least one image side exceeds the {MAX_IMAGE_DIMENSION}px limit; "
            "downscale the image and read the smaller copy"
        )
    if facts.media_type != media_type:  # a sniffed type is the decoded one: declared
        raise ValueError(
            f"{where}: the {extension} extension declares {media_type}, but the bytes use a "
            "different image format; rename the file to match its actual format if it is "
            "PNG/JPEG/WebP/GIF, or convert it to one of those formats"
        )
    return facts


def read_image_tools(read: Tool) -> list[Tool]:
    """`read_image` sharing `read`'s memory of what each session has seen and its homes."""
    assert isinstance(read, _FsTool)  # fs_family's `read`
    image = ReadImageTool(read.seen)
    image.homes = read.homes
    return [image]

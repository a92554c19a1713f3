"""What `read_image` needs to know of an image file's bytes, without an image library.

Native 0.2.1-rc.2's `read_image` names a file's type by its extension (or, for a file
without one, by its signature) and admits it only when its image library decodes it
whole, within 8192 pixels a side and 64,000,000 pixels. acp-plus reads the same facts
from the format's header (PNG, JPEG, GIF, WebP), and for a PNG also inflates its pixel
data and checks every chunk's CRC, so a truncated or corrupt PNG is refused as native
refuses it; a JPEG, GIF or WebP is checked as far as its header goes.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

IMAGE_EXTENSIONS = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".gif": "image/gif",
}
"""The extensions that declare an image, as native's `read_image` maps them."""

MAX_IMAGE_BYTES = 20 * 1024 * 1024
"""The most bytes native's `read_image` reads (its attachment store's per-image cap)."""
MAX_IMAGE_PIXELS = 64_000_000
MAX_IMAGE_DIMENSION = 8192

MALFORMED = "Unsupported or malformed image data."
"""Native's attachment store's words for bytes its image library does not decode."""

_PNG = b"\x89PNG\r\n\x1a\n"


class ImageDataError(ValueError):
    """Bytes that do not decode as the image they claim to be (native: INVALID_IMAGE)."""


@dataclass(frozen=True)
class ImageFacts:
    """A decoded image's type and size in pixels."""

    media_type: str
    width: int
    height: int


def sniff(data: bytes) -> str | None:
    """The media type a supported image file's signature declares, else None."""
    if data.startswith(_PNG):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def inspect(data: bytes) -> ImageFacts:
    """The type and size of `data`; `ImageDataError` when it is none of the four formats
    or is malformed."""
    kind = sniff(data)
    try:
        if kind == "image/png":
            return _png(data)
        if kind == "image/jpeg":
            return _jpeg(data)
        if kind == "image/gif" and len(data) >= 13:
            width, height = struct.unpack_from("<HH", data, 6)
            return _facts(kind, width, height)
        if kind == "image/webp":
            return _webp(data)
    except (struct.error, zlib.error) as exc:
        raise ImageDataError(MALFORMED) from exc
    raise ImageDataError(MALFORMED)


def _facts(kind: str, width: int, height: int) -> ImageFacts:
    if width < 1 or height < 1:
        raise ImageDataError(MALFORMED)
    return ImageFacts(kind, width, height)


def _png(data: bytes) -> ImageFacts:
    pos, header, pixels, ended = len(_PNG), b"", bytearray(), False
    while pos + 8 <= len(data) and not ended:
        length, tag = struct.unpack_from(">I4s", data, pos)
        body = data[pos + 8 : pos + 8 + length]
        crc = data[pos + 8 + length : pos + 12 + length]
        if len(body) != length or len(crc) != 4:
            raise ImageDataError(MALFORMED)
        if zlib.crc32(tag + body) != struct.unpack(">I", crc)[0]:
            raise ImageDataError(MALFORMED)
        if tag == b"IHDR":
            header = body
        elif tag == b"IDAT":
            pixels += body
        ended = tag == b"IEND"
        pos += 12 + length
    if len(header) != 13 or not pixels or not ended:
        raise ImageDataError(MALFORMED)
    width, height, depth, colour, _, _, interlaced = struct.unpack(">IIBBBBB", header)
    raw = zlib.decompress(bytes(pixels))
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(colour)
    if channels is None:
        raise ImageDataError(MALFORMED)
    row = (width * channels * depth + 7) // 8
    if not interlaced and len(raw) < height * (row + 1):
        raise ImageDataError(MALFORMED)  # rows missing: a truncated image
    return _facts("image/png", width, height)


_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg(data: bytes) -> ImageFacts:
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            raise ImageDataError(MALFORMED)
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        (length,) = struct.unpack_from(">H", data, pos + 2)
        if marker in _SOF:
            height, width = struct.unpack_from(">HH", data, pos + 5)
            return _facts("image/jpeg", width, height)
        if marker in (0xD9, 0xDA):  # the image ended, or its scan began, before a frame
            break
        pos += 2 + length
    raise ImageDataError(MALFORMED)


def _webp(data: bytes) -> ImageFacts:
    (size,) = struct.unpack_from("<I", data, 4)
    if size + 8 > len(data):
        raise ImageDataError(MALFORMED)  # truncated
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack_from("<HH", data, 26)
        return _facts("image/webp", width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L" and data[20:21] == b"\x2f":
        (bits,) = struct.unpack_from("<I", data, 21)
        return _facts("image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return _facts("image/webp", width, height)
    raise ImageDataError(MALFORMED)

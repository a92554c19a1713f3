"""A text file's bytes and back: byte-order marks and line endings, kept as they were (pure).

`write` keeps the byte-order mark an existing file had (and re-encodes in the encoding
it names); `edit` also keeps CRLF line endings. UTF-8 without a mark is the default.
"""

from __future__ import annotations

_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def split_bom(data: bytes) -> tuple[bytes, bytes]:
    """(the byte-order mark `data` starts with or b"", the rest)."""
    for bom, _ in _BOMS:
        if data.startswith(bom):
            return bom, data[len(bom) :]
    return b"", data


def _codec(bom: bytes) -> str:
    return next((codec for mark, codec in _BOMS if mark == bom), "utf-8")


def encode_text(text: str, bom: bytes) -> bytes:
    """`text` as the bytes of a file with byte-order mark `bom` (b"": plain UTF-8)."""
    return bom + text.encode(_codec(bom))


def decode_text(data: bytes) -> tuple[str, bytes]:
    """A file's text (strict) and its byte-order mark."""
    bom, body = split_bom(data)
    return body.decode(_codec(bom)), bom


def to_crlf(text: str) -> str:
    """`text` with every line break CRLF."""
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def is_crlf(text: str) -> bool:
    """Whether most of the file's line breaks are CRLF."""
    crlf = text.count("\r\n")
    return crlf > 0 and crlf * 2 >= text.count("\n")

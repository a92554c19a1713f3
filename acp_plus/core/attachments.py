"""The content-addressed attachment store for prompt images (§5 "images").

Files live at `<home>/attachments/<digest>`, where the digest is the lowercase hex
SHA-256 of the bytes, so the same image is stored once and a reference can be verified
on every read. The store keeps bytes only: the mime type travels in the event that
references the digest (`user/message` content `{type: image, mimeType, digest}`).

A batch is checked against the image policy (`ImageLimits`) before anything is written,
then written in prompt order with temp file + fsync + rename (`durable.write_atomic`),
and the directory fsynced once, so a
crash never leaves a partial file under a digest name. If a write fails, the files this
batch created are removed again: the caller sees all of the batch or none of it.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from acp_plus.core.durable import fsync_dir, write_atomic

# The image types a prompt may carry (§5); `protocol/content.py` refuses others with
# the same text before anything reaches the store.
IMAGE_MIME_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
BAD_MIME_TYPE = "image mimeType must be image/png, image/jpeg, image/webp, or image/gif"

_DIGEST = re.compile(r"[0-9a-f]{64}")

MiB = 1024 * 1024


@dataclass(frozen=True)
class ImageLimits:
    """The image policy of one store.

    The defaults are for real use: they admit photos and screenshots at full resolution
    and stay under what vision-capable chat APIs accept per image and per request. (The
    native parity harness uses 1024 bytes per image; a scenario that needs that limit
    sets it on the store it builds.)
    """

    max_image_bytes: int = 10 * MiB
    max_images: int = 20
    max_batch_bytes: int = 40 * MiB
    mime_types: tuple[str, ...] = IMAGE_MIME_TYPES


DEFAULT_LIMITS = ImageLimits()


class AttachmentError(Exception):
    """Base of the store's failures."""


class ImagePolicyError(AttachmentError):
    """An image the policy refuses; its message is shown to the client as is (-32602)."""


class AttachmentUnavailable(AttachmentError):
    """A reference that names no stored attachment, or whose bytes no longer match it."""


def digest_of(data: bytes) -> str:
    """The reference of `data`: lowercase hex SHA-256."""
    return hashlib.sha256(data).hexdigest()


def is_digest(value: object) -> bool:
    """Whether `value` is a well-formed reference (never a path: only 64 hex digits)."""
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None


def check_batch(images: Sequence[tuple[str, bytes]], limits: ImageLimits) -> None:
    """Raise `ImagePolicyError` for the first policy violation of a batch (pure).

    Images are numbered from 1 in prompt order, so the message says which one failed.
    """
    if len(images) > limits.max_images:
        raise ImagePolicyError(
            f"the prompt has {len(images)} images; the limit is {limits.max_images} per prompt"
        )
    total = 0
    for number, (mime_type, data) in enumerate(images, start=1):
        if mime_type not in limits.mime_types:
            raise ImagePolicyError(BAD_MIME_TYPE)
        if not data:
            raise ImagePolicyError(f"image {number} is empty")
        if len(data) > limits.max_image_bytes:
            raise ImagePolicyError(
                f"image {number} is {len(data)} bytes; "
                f"the limit is {limits.max_image_bytes} bytes per image"
            )
        total += len(data)
    if total > limits.max_batch_bytes:
        raise ImagePolicyError(
            f"the prompt's images total {total} bytes; "
            f"the limit is {limits.max_batch_bytes} bytes per prompt"
        )


class AttachmentStore:
    """Images under `<home>/attachments`, addressed by the SHA-256 of their bytes."""

    def __init__(self, root: Path | str, limits: ImageLimits = DEFAULT_LIMITS) -> None:
        self.root = Path(root)
        self.limits = limits
        # One batch at a time per process: a rollback must not delete a file another
        # batch has just reused (same bytes, same name).
        self._lock = threading.Lock()

    @classmethod
    def under_home(cls, home: Path | str, limits: ImageLimits = DEFAULT_LIMITS) -> AttachmentStore:
        """The store of an acp-plus home directory."""
        return cls(Path(home) / "attachments", limits)

    def path(self, digest: str) -> Path:
        """Where a reference's bytes live; refuses anything but a digest."""
        if not is_digest(digest):
            raise AttachmentUnavailable(f"not an attachment reference: {digest!r}")
        return self.root / digest

    def save_batch(self, images: Sequence[tuple[str, bytes]]) -> list[str]:
        """Store `(mimeType, bytes)` images as one ordered batch; returns their digests.

        Raises `ImagePolicyError` (nothing written) when the policy refuses the batch,
        `OSError` (nothing left behind) when writing fails. Blocking: call it from a
        worker thread in async code.
        """
        check_batch(images, self.limits)
        with self._lock:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            created: list[Path] = []
            digests: list[str] = []
            try:
                for _mime_type, data in images:
                    digest = digest_of(data)
                    target = self.root / digest
                    if not self._holds(target, digest):
                        write_atomic(target, data, mode=0o600)
                        created.append(target)
                    digests.append(digest)
                fsync_dir(self.root)
            except BaseException:
                for path in created:
                    with contextlib.suppress(OSError):
                        path.unlink()
                raise
        return digests

    def read(self, digest: str) -> bytes:
        """The bytes of a reference; `AttachmentUnavailable` if missing or corrupt."""
        path = self.path(digest)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise AttachmentUnavailable(f"attachment {digest} is unavailable: {exc}") from exc
        if digest_of(data) != digest:
            raise AttachmentUnavailable(f"attachment {digest} is corrupt")
        return data

    def _holds(self, target: Path, digest: str) -> bool:
        # An existing file is reused only if its bytes still match its name; a damaged
        # one is replaced by this write.
        try:
            return digest_of(target.read_bytes()) == digest
        except FileNotFoundError:
            return False

"""The attachment store: digests, atomic batches, policy errors, verified reads."""

from __future__ import annotations

import hashlib
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from acp_plus.core.attachments import (
    BAD_MIME_TYPE,
    AttachmentStore,
    AttachmentUnavailable,
    ImageLimits,
    ImagePolicyError,
    check_batch,
    digest_of,
    is_digest,
)

PNG = b"\x89PNG\r\n\x1a\n-one"
GIF = b"GIF89a-two"


def test_digest_is_lowercase_hex_sha256() -> None:
    assert digest_of(PNG) == hashlib.sha256(PNG).hexdigest()
    assert is_digest(digest_of(PNG))
    for bad in ("../etc/passwd", digest_of(PNG).upper(), digest_of(PNG)[:-1], "", None, 7):
        assert not is_digest(bad)


def test_save_batch_keeps_order_and_reads_back(tmp_path: Path) -> None:
    store = AttachmentStore.under_home(tmp_path)
    refs = store.save_batch([("image/png", PNG), ("image/gif", GIF), ("image/png", PNG)])
    assert refs == [digest_of(PNG), digest_of(GIF), digest_of(PNG)]
    assert store.read(refs[0]) == PNG and store.read(refs[1]) == GIF
    # Content-addressed: the repeated image is one file; no temp file is left behind.
    assert sorted(p.name for p in (tmp_path / "attachments").iterdir()) == sorted(set(refs))
    mode = (tmp_path / "attachments" / refs[0]).stat().st_mode
    assert stat.S_IMODE(mode) == 0o600


@pytest.mark.parametrize(
    ("batch", "message"),
    [
        ([("image/png", b"ab"), ("image/bmp", b"cd")], BAD_MIME_TYPE),
        ([("image/png", b"ab"), ("image/png", b"")], "image 2 is empty"),
        (
            [("image/png", b"x" * 9)],
            "image 1 is 9 bytes; the limit is 8 bytes per image",
        ),
        (
            [("image/png", b"1234"), ("image/png", b"5678"), ("image/png", b"9abc")],
            "the prompt's images total 12 bytes; the limit is 10 bytes per prompt",
        ),
        (
            [("image/png", b"1")] * 4,
            "the prompt has 4 images; the limit is 3 per prompt",
        ),
    ],
)
def test_policy_errors_keep_their_message_and_write_nothing(
    tmp_path: Path, batch: list[tuple[str, bytes]], message: str
) -> None:
    limits = ImageLimits(max_image_bytes=8, max_images=3, max_batch_bytes=10)
    store = AttachmentStore.under_home(tmp_path, limits)
    with pytest.raises(ImagePolicyError) as caught:
        store.save_batch(batch)
    assert str(caught.value) == message
    assert not (tmp_path / "attachments").exists()


def test_default_limits_admit_a_real_photo_size() -> None:
    check_batch([("image/jpeg", b"\xff" * (5 * 1024 * 1024))], ImageLimits())
    with pytest.raises(ImagePolicyError):
        check_batch([("image/jpeg", b"\xff" * (10 * 1024 * 1024 + 1))], ImageLimits())


def test_a_failed_write_rolls_back_the_files_the_batch_created(tmp_path: Path) -> None:
    store = AttachmentStore.under_home(tmp_path)
    kept = store.save_batch([("image/gif", GIF)])[0]
    # A directory squatting on the second image's name makes its write fail for real.
    (tmp_path / "attachments" / digest_of(b"second")).mkdir()
    with pytest.raises(OSError):
        store.save_batch([("image/png", PNG), ("image/gif", GIF), ("image/png", b"second")])
    names = {p.name for p in (tmp_path / "attachments").iterdir()}
    # The first image (new in this batch) is gone; the one stored earlier survives.
    assert names == {kept, digest_of(b"second")}
    assert store.read(kept) == GIF


def test_a_damaged_file_is_refused_on_read_and_replaced_on_save(tmp_path: Path) -> None:
    store = AttachmentStore.under_home(tmp_path)
    ref = store.save_batch([("image/png", PNG)])[0]
    (tmp_path / "attachments" / ref).write_bytes(b"tampered")
    with pytest.raises(AttachmentUnavailable, match="corrupt"):
        store.read(ref)
    assert store.save_batch([("image/png", PNG)]) == [ref]
    assert store.read(ref) == PNG


def test_read_refuses_unknown_and_malformed_references(tmp_path: Path) -> None:
    store = AttachmentStore.under_home(tmp_path)
    with pytest.raises(AttachmentUnavailable, match="unavailable"):
        store.read(digest_of(b"never stored"))
    (tmp_path / "secret").write_bytes(b"x")
    with pytest.raises(AttachmentUnavailable, match="not an attachment reference"):
        store.read("../secret")


def test_concurrent_batches_sharing_an_image_all_succeed(tmp_path: Path) -> None:
    store = AttachmentStore.under_home(tmp_path)
    batches = [[("image/png", PNG), ("image/gif", bytes([n]) * 3)] for n in range(1, 17)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(store.save_batch, batches))
    assert all(refs[0] == digest_of(PNG) for refs in results)
    for refs, batch in zip(results, batches, strict=True):
        assert store.read(refs[1]) == batch[1][1]
    assert len(list((tmp_path / "attachments").iterdir())) == 17  # no temp files left

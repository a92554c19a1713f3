"""The pinned ACP schema: fetch, verification, method map."""

from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path

import pytest

from parity.checks import acp_schema
from parity.checks.acp_schema import SchemaError, fetch, install, load_schema, method_defs


def test_fetch_is_idempotent_and_needs_no_npm_once_cached(tmp_path: Path) -> None:
    cached = fetch()
    dest = tmp_path / "schema.json"
    shutil.copy(cached, dest)
    # A second fetch must not even look for npm.
    assert fetch(dest, npm="/nonexistent/npm") == dest


def test_fetch_without_npm_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    with pytest.raises(SchemaError, match=r"npm is not on PATH.*@agentclientprotocol/sdk@2\.4\.0"):
        fetch(tmp_path / "schema.json")


def test_a_cached_file_with_other_bytes_is_refetched(tmp_path: Path) -> None:
    dest = tmp_path / "schema.json"
    dest.write_text('{"$defs": {}}')
    with pytest.raises(SchemaError, match="npm pack"):
        fetch(dest, npm="/bin/false")


def test_install_refuses_a_tarball_that_is_not_the_pinned_one(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = b'{"$defs": {}}'
        info = tarfile.TarInfo(acp_schema.MEMBER)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(SchemaError, match=r"tarball sha256 is .* refusing it"):
        install(buf.getvalue(), tmp_path / "schema.json")
    assert not (tmp_path / "schema.json").exists()


def test_load_schema_names_the_fix_when_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The shipped copy gone: reinstall, fetch, or the variable, all named.
    monkeypatch.delenv(acp_schema.ENV_PATH, raising=False)
    monkeypatch.setattr(acp_schema, "SHIPPED", tmp_path / "absent.json")
    with pytest.raises(SchemaError) as gone:
        load_schema(acp_schema.schema_path())
    fixes = ("pip install --force-reinstall acp-parity", "acp_schema fetch", "ACP_PARITY_SCHEMA")
    for fix in fixes:
        assert fix in str(gone.value)
    # The variable pointing nowhere: it is the variable that is named.
    monkeypatch.setenv(acp_schema.ENV_PATH, str(tmp_path / "elsewhere.json"))
    with pytest.raises(SchemaError, match=r"where \$ACP_PARITY_SCHEMA points"):
        load_schema()


def test_the_shipped_schema_is_the_pinned_bytes() -> None:
    # The file the package ships (and a wheel carries) is exactly what `fetch` verifies.
    assert acp_schema.SHIPPED.is_relative_to(Path(acp_schema.__file__).resolve().parents[1])
    assert acp_schema._sha256(acp_schema.SHIPPED.read_bytes()) == acp_schema.SCHEMA_SHA256


def test_method_map_covers_the_methods_the_harness_sees() -> None:
    methods = method_defs(load_schema(fetch()))
    assert methods[("session/update", "notification")] == "SessionNotification"
    assert methods[("session/prompt", "request")] == "PromptRequest"
    assert methods[("session/prompt", "response")] == "PromptResponse"
    assert methods[("session/request_permission", "request")] == "RequestPermissionRequest"
    assert methods[("initialize", "response")] == "InitializeResponse"
    assert methods[("$/cancel_request", "notification")] == "CancelRequestNotification"
    for method in ("session/list", "session/resume", "session/close", "session/load"):
        assert (method, "response") in methods
    assert ("_session/steering", "request") not in methods


def test_cli(capsys: pytest.CaptureFixture[str]) -> None:
    fetch()
    assert acp_schema.main(["methods"]) == 0
    assert "SessionNotification" in capsys.readouterr().out
    assert acp_schema.main(["nonsense"]) == 2

"""mcpServers validation and name normalization (§1.4)."""

from __future__ import annotations

from typing import Any

import pytest

from acp_plus.core.tools.mcp import HttpServer, StdioServer
from acp_plus.protocol import mcp_config
from acp_plus.wire.errors import RpcError

CWD = "/work/session"


# Expected names computed by a node script following §1.4 (String.normalize("NFKD"),
# the same regexes, crypto sha256 of the original name).
@pytest.mark.parametrize(
    ("name", "normalized"),
    [
        ("files", "files"),
        ("-_-", "-_-"),
        ("___", "___"),
        ("x" * 32, "x" * 32),
        ("a" * 33, "a" * 20 + "_852785c8"),
        ("my server", "my_server_b129874b"),
        ("café", "cafe_850f7dc4"),
        ("ﬁle ① tools", "file_1_tools_7d330d1a"),
        ("\uff26\uff35\uff2c\uff2c", "FULL_2581c205"),  # fullwidth FULL
        ("日本語", "server_77710aed"),
        ("a.b.c", "a_b_c_845e3044"),
        ("  lead and trail  ", "lead_and_trail_7d6962aa"),
        ("Ünïcödé-Sërvér with a very long name indeed", "U_ni_co_de_-Se_rve_r_d1b1b983"),
        ("\ud800x", "x_a87ce467"),  # a lone surrogate hashes as U+FFFD, as in Node
    ],
)
def test_normalize_name(name: str, normalized: str) -> None:
    assert mcp_config.normalize_name(name) == normalized
    assert len(normalized) <= 32


def stdio(name: str = "fs", **fields: Any) -> dict[str, Any]:
    return {"name": name, "command": "/usr/bin/fs-mcp", "args": ["--ro"], "env": [], **fields}


def http(name: str = "web", **fields: Any) -> dict[str, Any]:
    return {
        "type": "http",
        "name": name,
        "url": "https://127.0.0.1:8443/mcp",
        "headers": [],
        **fields,
    }


def test_valid_servers_become_typed_specs_in_order() -> None:
    specs = mcp_config.validate(
        [
            stdio(
                "my server", env=[{"name": "TOKEN", "value": "t=1"}, {"name": "token", "value": ""}]
            ),
            http(headers=[{"name": "Authorization", "value": "Bearer x\ty é"}]),
            {"type": "stdio", "name": "s", "command": "/bin/s", "args": [], "env": []},
        ],
        cwd=CWD,
    )
    assert specs == [
        StdioServer(
            name="my_server_b129874b",
            source_name="my server",
            command="/usr/bin/fs-mcp",
            args=("--ro",),
            env=(("TOKEN", "t=1"), ("token", "")),
            cwd=CWD,
        ),
        HttpServer(
            name="web",
            source_name="web",
            url="https://127.0.0.1:8443/mcp",
            headers=(("Authorization", "Bearer x\ty é"),),
        ),
        StdioServer("s", "s", "/bin/s", (), (), CWD),
    ]


@pytest.mark.parametrize("absent", [None, []])
def test_no_servers(absent: Any) -> None:
    assert mcp_config.validate(absent, cwd=CWD) == []


def test_same_name_in_another_session_is_fine() -> None:
    first = mcp_config.validate([stdio("fs")], cwd="/a")
    second = mcp_config.validate([stdio("fs")], cwd="/b")
    assert first[0].name == second[0].name == "fs"


@pytest.mark.parametrize(
    ("servers", "detail"),
    [
        ([stdio("")], "mcpServers contains an invalid server name"),
        ([stdio(" \t ")], "mcpServers contains an invalid server name"),
        ([stdio("bad\x00name")], "mcpServers contains an invalid server name"),
        ([stdio("bad\nname")], "mcpServers contains an invalid server name"),
        ([stdio("del\x7f")], "mcpServers contains an invalid server name"),
        ([stdio("c1\x85")], "mcpServers contains an invalid server name"),
        (
            [stdio("my server"), http("my server")],
            "mcpServers contains duplicate normalized name: my_server_b129874b",
        ),
        ([stdio("fs"), stdio("fs")], "mcpServers contains duplicate normalized name: fs"),
        ([stdio(command="fs-mcp")], "mcpServers[0].command must be an absolute path"),
        ([stdio(), stdio(command="./fs")], "mcpServers[1].command must be an absolute path"),
        (
            [stdio(env=[{"name": "", "value": "x"}])],
            "mcpServers[0].env contains an invalid environment entry",
        ),
        (
            [stdio(env=[{"name": "A=B", "value": "x"}])],
            "mcpServers[0].env contains an invalid environment entry",
        ),
        (
            [stdio(env=[{"name": "A\x00", "value": "x"}])],
            "mcpServers[0].env contains an invalid environment entry",
        ),
        (
            [stdio(env=[{"name": "A", "value": "x\x00"}])],
            "mcpServers[0].env contains an invalid environment entry",
        ),
        (
            [stdio(env=[{"name": "A", "value": "1"}, {"name": "A", "value": "2"}])],
            "mcpServers[0].env contains duplicate name: A",
        ),
        ([http(url="ftp://host/mcp")], "mcpServers[0].url must be an absolute HTTP(S) URL"),
        ([http(url="/relative/mcp")], "mcpServers[0].url must be an absolute HTTP(S) URL"),
        ([http(url="http://")], "mcpServers[0].url must be an absolute HTTP(S) URL"),
        ([http(url="http://host:99999/")], "mcpServers[0].url must be an absolute HTTP(S) URL"),
        ([http(url="not a url")], "mcpServers[0].url must be an absolute HTTP(S) URL"),
        (
            [http(headers=[{"name": "Bad Name", "value": "x"}])],
            "mcpServers[0].headers contains an invalid header entry",
        ),
        (
            [http(headers=[{"name": "", "value": "x"}])],
            "mcpServers[0].headers contains an invalid header entry",
        ),
        (
            [http(headers=[{"name": "X-A", "value": "a\r\nInjected: 1"}])],
            "mcpServers[0].headers contains an invalid header entry",
        ),
        (
            [http(headers=[{"name": "X-A", "value": "nul\x00"}])],
            "mcpServers[0].headers contains an invalid header entry",
        ),
        (
            [http(headers=[{"name": "X-A", "value": "模"}])],
            "mcpServers[0].headers contains an invalid header entry",
        ),
        (
            [http(headers=[{"name": "X-Key", "value": "1"}, {"name": "x-key", "value": "2"}])],
            "mcpServers[0].headers contains duplicate name: x-key",
        ),
        (
            [{"type": "sse", "name": "s", "url": "http://h/", "headers": []}],
            "mcpServers[0] transport sse is not supported",
        ),
        (
            [stdio(), {"type": "acp", "name": "a", "id": "x"}],
            "mcpServers[1] transport acp is not supported",
        ),
        ([stdio(command=None)], "mcpServers[0] is invalid: command must be a string"),
        ([stdio(args="--ro")], "mcpServers[0] is invalid: args must be an array of strings"),
        ([stdio(env={"A": "1"})], "mcpServers[0] is invalid: env must be an array"),
        (
            [stdio(env=[{"name": "A"}])],
            "mcpServers[0] is invalid: env entries must be {name, value} strings",
        ),
        ([http(url=3)], "mcpServers[0] is invalid: url must be a string"),
        (
            [{"command": "/bin/x", "args": [], "env": []}],
            "mcpServers[0] is invalid: name must be a string",
        ),
        (["stdio"], "mcpServers[0] is invalid: expected an object"),
        ({"fs": stdio()}, "mcpServers is invalid: expected an array"),
    ],
)
def test_refusal_texts(servers: Any, detail: str) -> None:
    with pytest.raises(RpcError) as caught:
        mcp_config.validate(servers, cwd=CWD)
    assert caught.value.to_json() == {"code": -32602, "message": f"Invalid params: {detail}"}


def test_entry_checks_come_before_name_checks() -> None:
    # Chosen order (docs/contract-notes.md): every entry's transport and fields, then names.
    with pytest.raises(RpcError, match=r"mcpServers\[1\]\.command"):
        mcp_config.validate([stdio(""), stdio(command="rel")], cwd=CWD)


@pytest.mark.parametrize(
    ("name", "value", "valid"),
    [
        ("X-Custom_1.~!#$%&'*+^`|", "v", True),
        ("Authorization", "", True),
        ("Latin1", "\u00ff\u0080", True),
        ("tab", "a\tb", True),
        ("colon:", "v", False),
        ("sp ace", "v", False),
        ("ü", "v", False),
        ("X", "\n", False),
        ("X", "\r", False),
        ("X", "\u0100", False),
    ],
)
def test_header_validity(name: str, value: str, valid: bool) -> None:
    assert mcp_config.is_valid_header(name, value) is valid


# Expected values are node's `new URL(u)` with an http(s) protocol (see the oracle test).
@pytest.mark.parametrize(
    ("url", "valid"),
    [
        ("http://127.0.0.1:8080/mcp", True),
        ("HTTPS://Example.COM", True),
        ("http:host", True),  # WHATWG: slashes after a special scheme are optional
        ("https:\\\\host\\path", True),
        (" \x00http://a\t\n ", True),
        ("http://user:pw@host/", True),
        ("http://[::1]:8080/", True),
        ("http://0x7f.1/", True),
        ("http://4294967295/", True),
        ("http://\u00e9.com/", True),
        ("http://a:65535", True),
        ("http://a:/", True),
        ("http://", False),
        ("http://@/", False),
        ("http://a:65536", False),
        ("http://a:0x50", False),
        ("http://[::1/", False),
        ("http://a b/", False),
        ("http://a%/", False),
        ("http://a<b/", False),
        ("http://256.256.256.256/", False),
        ("http://4294967296/", False),
        ("http://09.1/", False),
        ("http://0x0x7f.1/", False),
        ("http://a\u200db/", False),
        ("http://xn--/", False),
        ("ftp://a/", False),
        ("ws://a/", False),
        ("a/b", False),
        ("", False),
    ],
)
def test_http_url_follows_whatwg(url: str, valid: bool) -> None:
    assert mcp_config.is_http_url(url) is valid

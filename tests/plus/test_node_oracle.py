"""Differential checks against node, the runtime native dsh-acp runs on.

The pure modules claim to produce what JavaScript produces (`JSON.stringify`,
`JSON.parse`, `String.prototype.trim`, `String.prototype.normalize`, `Buffer`
base64url, `crypto` SHA-256, `path.resolve`). One node process answers every probe of
this module; its answers are the oracle. CI has node (.ci/run), so there a missing node
fails instead of skipping.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from typing import Any

import pytest

from acp_plus.core import js_json
from acp_plus.protocol import content, cursor, mcp_config

ORACLE = r"""
const crypto = require("crypto");
const path = require("path");
const probes = JSON.parse(require("fs").readFileSync(0, "utf8"));
const attempt = (f) => { try { return f(); } catch (e) { return null; } };
const answers = {
  stringify: probes.stringify.map((t) => JSON.stringify(JSON.parse(t))),
  reparse: probes.reparse.map((t) => attempt(() => JSON.stringify(JSON.parse(t)))),
  cursor: probes.cursor.map(([n, id]) =>
    Buffer.from(JSON.stringify([n, id])).toString("base64url")),
  trim: probes.trim.map((s) => s.trim()),
  name: probes.name.map((name) => {
    if (/^[A-Za-z0-9_-]{1,32}$/.test(name)) return name;
    const stem = name.normalize("NFKD").replace(/[^A-Za-z0-9_-]+/g, "_")
      .replace(/^_+|_+$/g, "").slice(0, 20) || "server";
    const hash = crypto.createHash("sha256").update(name).digest("hex").slice(0, 8);
    return (stem + "_" + hash).slice(0, 32);
  }),
  resolve: probes.resolve.map((p) => path.resolve(p)),
  url: probes.url.map((s) => attempt(() => ["http:", "https:"].includes(new URL(s).protocol))
    === true),
  link: probes.link.map(([n, u]) =>
    `\n[resource_link name=${JSON.stringify(n)} uri=${JSON.stringify(u)}]\n`),
};
process.stdout.write(JSON.stringify(answers));
"""

_PIECES = [
    "a",
    "Z",
    "0",
    " ",
    '"',
    "\\",
    "/",
    "\t",
    "\n",
    "\x00",
    "\x1f",
    "\x7f",
    "\u00e9",
    "e\u0301",
    "\u2028",
    "\ufeff",
    "\u00a0",
    "\ufb01",
    "\u2460",
    "\uff26",
    "\u6a21",
    "\U0001f600",
    "\ud800",
    "\udfff",
    "-",
    "_",
    ".",
]


def _text(rng: random.Random, most: int = 8) -> str:
    return "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, most)))


def _number(rng: random.Random) -> float | int:
    return rng.choice(
        [
            rng.randint(-(2**60), 2**60),
            rng.randint(-1000, 1000),
            rng.uniform(-1e6, 1e6),
            rng.random() * 10.0 ** rng.randint(-30, 30),
            float(rng.randint(0, 10**6)),
            -0.0,
        ]
    )


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(6 if depth < 3 else 4)
    if kind == 0:
        return _text(rng)
    if kind == 1:
        return _number(rng)
    if kind == 2:
        return rng.choice([True, False, None])
    if kind == 3:
        return _text(rng, 3)
    if kind == 4:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = [rng.choice([_text(rng, 3), str(rng.randint(0, 20)), "01", "4294967295"])]
    keys += [_text(rng, 3) for _ in range(rng.randint(0, 3))]
    return {k: _value(rng, depth + 1) for k in keys}


_URL_BASES = [
    "http://a",
    "https://127.0.0.1:8443/mcp",
    "http://[::1]:80/x",
    "http://user:pw@h.example/p?q#f",
    "http://0x7f.1",
    "http://4294967295",
    "http://\u00e9.com/",
    "HTTP://EX.com",
]
# Punycode ("xn--") labels are left out: their UTS #46 validity is only approximated.
_URL_PIECES = [
    *"/\\:@[]%#? \t.a-\u00e9\x00\x7f\u00df\u00ad\uff21\u3002\u200d",
    *["%41", "%zz", "%C3%A9", "0x", "1", "999", "65536", "..", "http:", "//", "[::1]", "%25"],
]
_URL_FIXED = [
    "http:a",
    "http:/a",
    "http:///a",
    "https:\\\\a\\b",
    "http://",
    "http://a:99999",
    "http://a b/",
    "http://a%/",
    "http://256.256.256.256/",
    "http://09.1/",
    "http://0x0x7f.1",
    " http://a ",
    "ftp://a",
    "not a url",
    "/relative",
]


def _url(rng: random.Random) -> str:
    url = rng.choice(_URL_BASES)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(url) + 1)
        url = url[:at] + rng.choice(_URL_PIECES) + url[at + rng.choice([0, 0, 1]) :]
    return url


def _transport(value: Any) -> str:
    # ASCII-escaped JSON carries lone surrogates and every float's exact double to node.
    return json.dumps(value, ensure_ascii=True)


def _probes() -> dict[str, list[Any]]:
    rng = random.Random(20261129)
    values = [_value(rng) for _ in range(400)]
    return {
        "values": values,
        "stringify": [_transport(v) for v in values],
        "reparse": [
            '{"x": 1.0, "0": [1e2, -0, 0.5e-6, 12345678901234567890]}',
            ' {"b":1,"a":2,"1":3} ',
            '"\\ud800\\u0041"',
            "1e400",
            "-1e-400",
            "NaN",
            "\u00a01",
            "[1,]",
            "01",
            '"\t"',
            "[1e21, 1.2345678901234568e+20, 12345678901234567890, 9007199254740993]",
            "[-0, -0.0, 1e-7, 0.000001, 5e-324, 1.7976931348623157e308, 100000000000000000000]",
        ],
        "cursor": [[rng.randint(0, 2**53 - 1), _text(rng) or "x"] for _ in range(200)],
        "trim": [_text(rng) for _ in range(300)],
        "name": [_text(rng, 30) for _ in range(300)] + ["files", "x" * 33, "my server"],
        "resolve": [
            "/" + "/".join(rng.choice(["a", ".", "..", "", "b c"]) for _ in range(5))
            for _ in range(200)
        ]
        + ["//a", "///", "/a/"],
        "link": [[_text(rng), _text(rng)] for _ in range(100)],
        "url": _URL_FIXED + [_url(rng) for _ in range(1500)],
    }


@pytest.fixture(scope="module")
def oracle() -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is required in CI for the JavaScript oracle")
        pytest.skip("node is not installed; the JavaScript oracle cannot run")
    probes = _probes()
    wire = {k: v for k, v in probes.items() if k != "values"}
    done = subprocess.run(
        [node, "-e", ORACLE],
        input=json.dumps(wire, ensure_ascii=True),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    answers: dict[str, list[Any]] = json.loads(done.stdout)
    return probes, answers


Oracle = tuple[dict[str, list[Any]], dict[str, list[Any]]]


def test_js_json_equals_json_stringify(oracle: Oracle) -> None:
    probes, answers = oracle
    mine = [js_json.js_json(js_json.js_parse(t)) for t in probes["stringify"]]
    assert mine == answers["stringify"]
    # and straight from the Python values, without a parse in between
    assert [js_json.js_json(v) for v in probes["values"]] == answers["stringify"]


def test_js_parse_accepts_and_refuses_like_json_parse(oracle: Oracle) -> None:
    probes, answers = oracle
    mine: list[str | None] = []
    for text in probes["reparse"]:
        try:
            mine.append(js_json.js_json(js_json.js_parse(text)))
        except ValueError:
            mine.append(None)
    assert mine == answers["reparse"]


def _typed(value: Any) -> Any:
    # JSON values with their Python number type made visible: 1 and 1.0 must differ.
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def test_python_encoding_of_parsed_values_reads_like_json_stringify(oracle: Oracle) -> None:
    # acp-plus sends parsed tool arguments on with Python's encoder (httpx `json=`,
    # the JSON-RPC writer); a reader must see JS's numbers: the same value, int vs float.
    probes, answers = oracle
    for text, js_text in zip(probes["reparse"], answers["reparse"], strict=True):
        if js_text is None or "Infinity" in json.dumps(js_json.js_parse(text)):
            continue  # refused by JSON.parse; non-finite becomes null (below)
        python_text = json.dumps(js_json.js_parse(text), ensure_ascii=False)
        assert _typed(json.loads(python_text)) == _typed(json.loads(js_text)), text


def test_negative_zero_is_kept_only_on_request() -> None:
    assert json.dumps(js_json.js_parse("[-0, -0.0]")) == "[0, 0]"
    kept = js_json.js_parse("[-0, -0.0, 0]", negative_zero=True)
    assert [str(v) for v in kept] == ["-0.0", "-0.0", "0"]


def test_cursor_encoding_equals_buffer_base64url(oracle: Oracle) -> None:
    probes, answers = oracle
    assert [cursor.encode_cursor(n, i) for n, i in probes["cursor"]] == answers["cursor"]


def test_js_trim_equals_string_trim(oracle: Oracle) -> None:
    probes, answers = oracle
    assert [js_json.js_trim(s) for s in probes["trim"]] == answers["trim"]


def test_mcp_name_normalization_equals_node(oracle: Oracle) -> None:
    probes, answers = oracle
    assert [mcp_config.normalize_name(n) for n in probes["name"]] == answers["name"]


def test_lexical_resolve_equals_path_resolve(oracle: Oracle) -> None:
    probes, answers = oracle
    assert [cursor.lexical_resolve(p) for p in probes["resolve"]] == answers["resolve"]


def test_resource_link_rendering_equals_template(oracle: Oracle) -> None:
    probes, answers = oracle
    assert [content.render_resource_link(n, u) for n, u in probes["link"]] == answers["link"]


def test_http_url_check_equals_new_url(oracle: Oracle) -> None:
    probes, answers = oracle
    mine = [mcp_config.is_http_url(u) for u in probes["url"]]
    assert [u for u, a, m in zip(probes["url"], answers["url"], mine, strict=True) if a != m] == []
    assert any(answers["url"]) and not all(answers["url"])  # both outcomes exercised

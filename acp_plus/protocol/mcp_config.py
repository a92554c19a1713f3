"""`mcpServers` validation and server-name normalization (§1.4).

`validate` turns the client's `mcpServers` array into typed, normalized specs or raises
the -32602 RpcError with the contract's exact detail. Nothing is started here; the MCP
client in the core mounts the returned specs.
"""

from __future__ import annotations

import encodings.idna
import hashlib
import ipaddress
import re
import unicodedata
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from acp_plus.core.js_json import js_trim, node_utf8
from acp_plus.core.tools.mcp import HttpServer, McpServerSpec, StdioServer
from acp_plus.wire.errors import RpcError, invalid_params

_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
_OTHER_RUN = re.compile(r"[^A-Za-z0-9_-]+")
# RFC 7230 token characters, the rule Node applies to header names.
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# WHATWG URL parsing strips leading and trailing C0 controls and spaces first.
_URL_TRIM = "".join(chr(c) for c in range(0x21))
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_AUTHORITY_END = re.compile(r"[/\\?#]")
# UTS #46 maps these full stops to "." before splitting labels.
_LABEL_DOTS = re.compile("[.\u3002\uff0e\uff61]")
_HEX_LABEL = re.compile(r"0[xX][0-9A-Fa-f]*")
# WHATWG forbidden domain code points, beyond C0 controls.
_FORBIDDEN_DOMAIN = frozenset(" #%/:<>?@[\\]^|\x7f")

INVALID_NAME = "mcpServers contains an invalid server name"


def normalize_name(name: str) -> str:
    """The server namespace the model sees in `mcp__<server>__<tool>` (§1.4).

    A name of 1-32 `[A-Za-z0-9_-]` is kept; any other becomes NFKD with runs of other
    characters as `_`, `_` trimmed, cut to 20 (`server` if empty), `_` and the first 8 hex
    digits of the name's SHA-256 appended, cut to 32. The caller checks validity first.
    """
    if _PLAIN_NAME.fullmatch(name):
        return name
    stem = _OTHER_RUN.sub("_", unicodedata.normalize("NFKD", name)).strip("_")[:20] or "server"
    digest = hashlib.sha256(node_utf8(name)).hexdigest()[:8]
    return f"{stem}_{digest}"[:32]


def is_valid_name(name: Any) -> bool:
    """A server name must be a non-blank string without control characters."""
    if not isinstance(name, str) or js_trim(name) == "":
        return False
    return not any(unicodedata.category(ch) == "Cc" for ch in name)


def is_valid_header(name: str, value: str) -> bool:
    """Node header validity: a token name; a value without NUL, CR or LF and with no
    character above U+00FF (header values are byte strings)."""
    if not _HEADER_NAME.fullmatch(name):
        return False
    return not any(ch in "\0\r\n" or ord(ch) > 0xFF for ch in value)


def is_valid_env_entry(name: str, value: str) -> bool:
    """An environment entry needs a non-empty name without `=` or NUL, and a value
    without NUL."""
    return name != "" and "=" not in name and "\0" not in name and "\0" not in value


def _ipv4_number(part: str) -> int | None:
    """A WHATWG IPv4 number: 0x/0X hex, a leading 0 octal, else decimal; None if invalid."""
    if part[:2] in ("0x", "0X"):
        digits, radix, allowed = part[2:], 16, "0123456789abcdefABCDEF"
    elif len(part) > 1 and part.startswith("0"):
        digits, radix, allowed = part[1:], 8, "01234567"
    else:
        digits, radix, allowed = part, 10, "0123456789"
    if any(ch not in allowed for ch in digits) or (digits == "" and radix != 16):
        return None
    return int(digits or "0", radix)


def _valid_ipv4(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    numbers = [_ipv4_number(p) for p in parts]
    if len(parts) > 4 or any(n is None for n in numbers):
        return False
    values = [n for n in numbers if n is not None]
    if any(n > 255 for n in values[:-1]):
        return False
    return values[-1] < 1 << (8 * (5 - len(values)))


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    last = parts[-1]
    if last != "" and last.isascii() and last.isdigit():
        return True
    return _HEX_LABEL.fullmatch(last) is not None


def _valid_host(host: str) -> bool:
    if host.startswith("["):
        if not host.endswith("]") or "%" in host:
            return False
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return False
        return True
    decoded = unquote(host, errors="strict") if "%" in host else host
    if decoded == "":
        return False
    try:
        domain = ".".join(_ascii_label(label) for label in _LABEL_DOTS.split(decoded))
    except UnicodeError:
        return False
    if domain == "" or any(ch in _FORBIDDEN_DOMAIN or ord(ch) < 0x20 for ch in domain):
        return False
    return _valid_ipv4(domain) if _ends_in_number(domain) else True


def _ascii_label(label: str) -> str:
    """One domain label to ASCII, close to UTS #46 as WHATWG applies it; raises
    UnicodeError for an invalid label.

    Empty labels are allowed. Python's IDNA 2003 codec stands in for the mapping of
    non-ASCII labels, plus the two UTS #46 checks it lacks: joiners (CheckJoiners) and
    `xn--` labels that must decode to a non-ASCII NFC label.
    """
    if not label.isascii():
        if "\u200c" in label or "\u200d" in label:
            raise UnicodeError("joiner in label")
        mapped = encodings.idna.nameprep(label)
        # A label of ignored characters (e.g. a soft hyphen) maps to an empty label.
        label = encodings.idna.ToASCII(mapped).decode("ascii") if mapped else ""
    label = label.lower()
    if label.startswith("xn--"):
        decoded = label[4:].encode("ascii").decode("punycode")
        if decoded.isascii() or unicodedata.normalize("NFC", decoded) != decoded:
            raise UnicodeError("invalid Punycode label")
        encodings.idna.ToASCII(decoded)
    return label


def is_http_url(url: str) -> bool:
    """Whether `url` parses as an `http:` or `https:` URL (WHATWG rules, as `new URL`).

    Covers what matters for a server address: trimming, tab/newline removal, any run of
    `/` or `\\` after the scheme, userinfo, bracketed IPv6, IPv4 number forms, ports up to
    65535, percent-decoding and forbidden code points in domains, IDNA for non-ASCII.
    """
    text = url.strip(_URL_TRIM).replace("\t", "").replace("\n", "").replace("\r", "")
    scheme = _SCHEME.match(text)
    if scheme is None or scheme.group(1).lower() not in ("http", "https"):
        return False
    rest = text[scheme.end() :].lstrip("/\\")
    authority = _AUTHORITY_END.split(rest, maxsplit=1)[0]
    host_port = authority.rpartition("@")[2]
    if host_port.startswith("["):
        close = host_port.find("]")
        host, after = host_port[: close + 1], host_port[close + 1 :]
        if close < 0 or (after and not after.startswith(":")):
            return False
        port = after[1:]
    else:
        host, _, port = host_port.partition(":")
    if port and not (port.isascii() and port.isdigit() and int(port) <= 65535):
        return False
    try:
        return _valid_host(host)
    except UnicodeDecodeError:
        return False


def _invalid(index: int, detail: str) -> RpcError:
    return invalid_params(f"mcpServers[{index}] is invalid: {detail}")


def _pairs(index: int, entries: Any, field: str) -> list[tuple[str, str]]:
    """`[{name, value}]` as pairs, or the schema refusal."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise _invalid(index, f"{field} must be an array")
    pairs = []
    for entry in entries:
        if not (
            isinstance(entry, Mapping)
            and isinstance(entry.get("name"), str)
            and isinstance(entry.get("value"), str)
        ):
            raise _invalid(index, f"{field} entries must be {{name, value}} strings")
        pairs.append((entry["name"], entry["value"]))
    return pairs


def _stdio(index: int, server: Mapping[str, Any], cwd: str) -> StdioServer:
    command, args = server.get("command"), server.get("args", [])
    if not isinstance(command, str):
        raise _invalid(index, "command must be a string")
    if args is None:
        args = []
    if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        raise _invalid(index, "args must be an array of strings")
    env = _pairs(index, server.get("env", []), "env")
    if not command.startswith("/"):
        raise invalid_params(f"mcpServers[{index}].command must be an absolute path")
    seen: set[str] = set()
    for name, value in env:
        if not is_valid_env_entry(name, value):
            raise invalid_params(f"mcpServers[{index}].env contains an invalid environment entry")
        if name in seen:
            raise invalid_params(f"mcpServers[{index}].env contains duplicate name: {name}")
        seen.add(name)
    return StdioServer("", server["name"], command, tuple(args), tuple(env), cwd)


def _http(index: int, server: Mapping[str, Any]) -> HttpServer:
    url = server.get("url")
    if not isinstance(url, str):
        raise _invalid(index, "url must be a string")
    headers = _pairs(index, server.get("headers", []), "headers")
    if not is_http_url(url):
        raise invalid_params(f"mcpServers[{index}].url must be an absolute HTTP(S) URL")
    seen: set[str] = set()
    for name, value in headers:
        if not is_valid_header(name, value):
            raise invalid_params(f"mcpServers[{index}].headers contains an invalid header entry")
        if name.lower() in seen:
            raise invalid_params(f"mcpServers[{index}].headers contains duplicate name: {name}")
        seen.add(name.lower())
    return HttpServer("", server["name"], url, tuple(headers))


def _server(index: int, server: Any, cwd: str) -> StdioServer | HttpServer:
    if not isinstance(server, Mapping):
        raise _invalid(index, "expected an object")
    transport = server.get("type")
    if transport is not None and not isinstance(transport, str):
        raise _invalid(index, "type must be a string")
    if transport not in (None, "stdio", "http"):
        raise invalid_params(f"mcpServers[{index}] transport {transport} is not supported")
    if not isinstance(server.get("name"), str):
        raise _invalid(index, "name must be a string")
    return _http(index, server) if transport == "http" else _stdio(index, server, cwd)


def validate(mcp_servers: Any, *, cwd: str) -> list[McpServerSpec]:
    """Typed specs for a request's `mcpServers` (absent or null means none), in order;
    raises the §1.4 RpcError (-32602) for the first refused entry, then for names."""
    if mcp_servers is None:
        return []
    if not isinstance(mcp_servers, list):
        raise invalid_params("mcpServers is invalid: expected an array")
    specs = [_server(i, server, cwd) for i, server in enumerate(mcp_servers)]
    named: list[McpServerSpec] = []
    seen: set[str] = set()
    for spec in specs:
        if not is_valid_name(spec.source_name):
            raise invalid_params(INVALID_NAME)
        name = normalize_name(spec.source_name)
        if name in seen:
            raise invalid_params(f"mcpServers contains duplicate normalized name: {name}")
        seen.add(name)
        named.append(_with_name(spec, name))
    return named


def _with_name(spec: McpServerSpec, name: str) -> McpServerSpec:
    if isinstance(spec, StdioServer):
        return StdioServer(name, spec.source_name, spec.command, spec.args, spec.env, spec.cwd)
    return HttpServer(name, spec.source_name, spec.url, spec.headers)

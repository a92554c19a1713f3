"""JSON text exactly as JavaScript's `JSON.stringify` / `JSON.parse` produce and read it,
and JavaScript's view of a string (UTF-16 pairs, `trim`, Node's UTF-8). Pure, stdlib only.

Native dsh-acp is a Node program, so every JSON text it derives (cursors, option values,
rendered resource links, parsed tool arguments) follows JavaScript's rules; Python's
`json` differs on lone surrogates, float spelling and key order. The helpers here close
those gaps so acp-plus matches byte for byte.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

_MAX_SAFE_INTEGER = 2**53 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")
# ECMAScript WhiteSpace + LineTerminator: what String.prototype.trim removes. Python's
# str.isspace differs (it counts U+001C..U+001F and U+0085, not U+FEFF).
JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff" + "".join(
    chr(c) for c in range(0x2000, 0x200B)
)


def js_text(text: str) -> str:
    """The string JavaScript would hold for `text`.

    JS strings are UTF-16, so a high surrogate followed by a low one *is* an astral
    character there (for example after joining two text blocks), while Python keeps two
    code points. Combine such pairs; lone surrogates stay as they are.
    """
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def js_trim(text: str) -> str:
    """`text.trim()` as JavaScript defines it."""
    return js_text(text).strip(JS_WHITESPACE)


def node_utf8(text: str) -> bytes:
    """The bytes Node's `Buffer.from(text)` (and `hash.update(text)`) produce: UTF-8 with
    each lone surrogate replaced by U+FFFD, where Python's encoder would raise."""
    return _SURROGATE.sub("\ufffd", js_text(text)).encode("utf-8")


def js_string(text: str) -> str:
    """`JSON.stringify(text)`: quotes, short escapes, `\\u00xx` for other controls, and
    `\\udxxx` for lone surrogates (well-formed stringify, ES2019); nothing else escaped."""
    # Python's encoder escapes exactly JSON.stringify's set apart from lone surrogates,
    # which it leaves raw; it runs in C, which matters for megabyte base64 images.
    quoted = json.dumps(js_text(text), ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


def js_number(value: float) -> str:
    """`Number.prototype.toString` as `JSON.stringify` uses it (non-finite gives `null`)."""
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == 0:
        return "0"  # JS prints -0 as 0
    sign = "-" if value < 0 else ""
    # repr gives the shortest round-trip digits, the same digits JS chooses.
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    all_digits = whole + fraction
    point = len(whole) + (int(exponent) if exponent else 0)
    stripped = all_digits.lstrip("0")
    point -= len(all_digits) - len(stripped)
    digits = stripped.rstrip("0")
    k, n = len(digits), point  # value = 0.<digits> * 10**n, ECMA-262 Number::toString
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        exp = n - 1
        exp_text = f"e+{exp}" if exp >= 0 else f"e-{-exp}"
        body = (digits if k == 1 else digits[0] + "." + digits[1:]) + exp_text
    return sign + body


def _is_array_index(key: str) -> bool:
    # JS objects list integer-like keys (canonical uint32 below 2**32-1) first, ascending.
    return key.isascii() and key.isdigit() and str(int(key)) == key and int(key) < 2**32 - 1


def js_json(value: Any) -> str:
    """Compact `JSON.stringify(value)` of plain JSON data (dict, list, str, number, bool, None).

    Integers beyond 2**53 are printed as the double JS would hold; dict keys follow JS
    property order (array-index keys ascending, then insertion order).
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return js_string(value)
    if isinstance(value, int):
        return str(value) if abs(value) <= _MAX_SAFE_INTEGER else js_number(float(value))
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, Mapping):
        keys = [str(k) for k in value]
        index_keys = sorted((k for k in keys if _is_array_index(k)), key=int)
        ordered = index_keys + [k for k in keys if not _is_array_index(k)]
        lookup = {str(k): v for k, v in value.items()}
        return "{" + ",".join(js_string(k) + ":" + js_json(lookup[k]) for k in ordered) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(js_json(item) for item in value) + "]"
    raise TypeError(f"not JSON data: {type(value).__name__}")


def _js_float(text: str) -> float | int:
    # JS has one number type: an integral double prints without ".0", so keep it an int
    # while it is printable as one (below 1e21, where JS switches to exponent form).
    number = float(text)
    if number.is_integer() and abs(number) < 1e21:
        # JS prints the shortest round-trip digits padded with zeros (1.2345678901234568e+20
        # is 123456789012345680000), not the double's exact value that int() would give.
        return int(Decimal(repr(number)))
    return number


def _js_int(text: str) -> float | int:
    number = int(text)
    return number if abs(number) <= _MAX_SAFE_INTEGER else _js_float(text)


def _negative_zero_kept(parse: Callable[[str], float | int]) -> Callable[[str], float | int]:
    def read(text: str) -> float | int:
        return -0.0 if text.startswith("-") and float(text) == 0 else parse(text)

    return read


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def js_parse(text: str, *, negative_zero: bool = False) -> Any:
    """`JSON.parse(text)` with JS number semantics; raises ValueError where JS throws.

    Both accept only JSON whitespace around the value; Python's extra NaN/Infinity
    literals are refused, and integral numbers come back as int as JS would print them.
    `-0` reads as `0`, which is how JS prints it, unless `negative_zero` keeps it as
    `-0.0` for a caller that must tell it apart (native refuses such tool arguments).
    """
    parse_float: Callable[[str], float | int] = _js_float
    parse_int: Callable[[str], float | int] = _js_int
    if negative_zero:
        parse_float, parse_int = _negative_zero_kept(_js_float), _negative_zero_kept(_js_int)
    return json.loads(
        text, parse_float=parse_float, parse_int=parse_int, parse_constant=_reject_constant
    )

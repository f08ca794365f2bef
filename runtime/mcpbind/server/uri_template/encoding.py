"""Percent-encoding and -decoding of URI template values and literals (RFC 6570 section 3.2.1)."""

from __future__ import annotations

from urllib.parse import unquote

__all__ = ["HEX", "decode", "encode", "encode_literal"]

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_RESERVED = frozenset(":/?#[]@!$&'()*+,;=")
HEX = frozenset("0123456789abcdefABCDEF")


def encode(value: str, allow_reserved: bool) -> str:
    out: list[str] = []
    i = 0
    n = len(value)
    while i < n:
        c = value[i]
        if c in _UNRESERVED or (allow_reserved and c in _RESERVED):
            out.append(c)
        elif allow_reserved and c == "%" and i + 2 < n and value[i + 1] in HEX and value[i + 2] in HEX:
            out.append(value[i : i + 3])
            i += 3
            continue
        else:
            out.extend(f"%{b:02X}" for b in c.encode("utf-8"))
        i += 1
    return "".join(out)


def decode(text: str) -> str:
    return unquote(text, encoding="utf-8", errors="strict")


def encode_literal(text: str) -> str:
    return encode(text, True)

"""``WWW-Authenticate`` challenges (RFC 9110 section 11.6.1): a resource server's 401 and 403
name the Protected Resource Metadata (``resource_metadata``, RFC 9728 section 5.1), the scopes
wanted (``scope``) and the error (``invalid_token``, ``insufficient_scope``: RFC 6750 section 3)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Challenge", "bearer_challenge", "format_challenge", "parse_challenges"]

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_QUOTED = r'"(?:[^"\\]|\\.)*"'
_SCHEME = re.compile(rf"\s*({_TOKEN})(?=\s|,|$)")
_PARAM = re.compile(rf"\s*({_TOKEN})\s*=\s*({_QUOTED}|{_TOKEN})\s*(?:,|$)")
_TOKEN68 = re.compile(r"\s*([A-Za-z0-9\-._~+/]+=*)\s*(?:,|$)")
_UNESCAPE = re.compile(r"\\(.)")


@dataclass(frozen=True, slots=True)
class Challenge:
    """One challenge: its scheme (compared case-insensitively) and its parameters, keyed by
    lower-cased name."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)

    @property
    def is_bearer(self) -> bool:
        return self.scheme.lower() == "bearer"

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata")

    @property
    def scope(self) -> str | None:
        return self.params.get("scope")

    @property
    def error(self) -> str | None:
        return self.params.get("error")


def parse_challenges(value: str) -> list[Challenge]:
    """Every challenge of one ``WWW-Authenticate`` value, in order. Parsing stops at the first
    text that is no challenge (what came before is kept): a malformed header yields what could be
    read of it, never an exception."""
    challenges: list[Challenge] = []
    position = 0
    while position < len(value):
        while position < len(value) and value[position] in " \t,":
            position += 1
        if position >= len(value):
            break
        scheme = _SCHEME.match(value, position)
        if scheme is None:
            break
        position = scheme.end()
        params: dict[str, str] = {}
        while True:
            param = _PARAM.match(value, position)
            if param is None:
                break
            # A parameter ends where the next one or the next scheme starts: "a=b, Basic x=y".
            name, raw = param.group(1).lower(), param.group(2)
            if raw.startswith('"'):
                raw = _UNESCAPE.sub(r"\1", raw[1:-1])
            params.setdefault(name, raw)
            position = param.end()
        if not params:
            token68 = _TOKEN68.match(value, position)
            if token68 is not None and "=" not in value[position : token68.end()].rstrip(", ").rstrip("="):
                position = token68.end()
        challenges.append(Challenge(scheme.group(1), params))
    return challenges


def bearer_challenge(value: str | None) -> Challenge | None:
    """The Bearer challenge of a ``WWW-Authenticate`` value, if it has one."""
    if not value:
        return None
    for challenge in parse_challenges(value):
        if challenge.is_bearer:
            return challenge
    return None


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_challenge(scheme: str, **params: str | None) -> str:
    """``Bearer error="invalid_token", resource_metadata="..."``: the parameters given (those
    that are None are left out), each as a quoted string. Control characters are refused: they
    would split or corrupt the header."""
    parts = []
    for name, text in params.items():
        if text is None:
            continue
        if any(ord(char) < 0x20 or ord(char) == 0x7F for char in text):
            raise ValueError(f"a control character in the {name} parameter of a challenge")
        parts.append(f"{name}={_quote(text)}")
    return f"{scheme} {', '.join(parts)}" if parts else scheme

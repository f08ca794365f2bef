"""What the sample-message tests share: the two sides, and checks of decoded values by path."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

Side = Literal["client", "server"]
# (path into the decoded value, expected value or expected type)
Check = tuple[str | tuple[str | int, ...], Any]


def other(side: Side) -> Side:
    return "server" if side == "client" else "client"


def wire(message: Any) -> bytes:
    return json.dumps(message).encode()


def dig(value: Any, path: str | tuple[str | int, ...]) -> Any:
    """Follow ``path`` (``"content.0.text"`` or a tuple) through structs, lists and dicts."""
    steps: Sequence[str | int] = path.split(".") if isinstance(path, str) else path
    for step in steps:
        if isinstance(value, list):
            value = value[int(step)]
        elif isinstance(value, dict):
            value = value[step]
        else:
            assert isinstance(step, str)
            value = getattr(value, step)
    return value


def check(value: Any, checks: Sequence[Check]) -> None:
    """Each path holds the expected value (same JSON type) or an instance of the expected type."""
    for path, expected in checks:
        actual = dig(value, path)
        if isinstance(expected, type):
            assert isinstance(actual, expected), f"{path}: {actual!r} is not a {expected.__name__}"
        else:
            assert actual == expected, f"{path}: {actual!r} != {expected!r}"
            assert type(actual) is type(expected) or {type(actual), type(expected)} == {int, float}, path

"""The upstream examples of 2026-07-28 as test vectors: each one decodes into the struct named
by its folder and encodes back to equal JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mcpbind.protocol.unions import decode
from mcpbind.schema import v2026_07_28

PROJECT = Path(__file__).resolve().parents[2]
EXAMPLES = PROJECT.parent / "shared" / "schema" / "2026-07-28" / "examples"
# This project's CI runs from a checkout beside ../shared and must not skip them; an unpacked sdist
# (PKG-INFO at its root) does not carry the upstream files, in CI or not.
IN_CI = os.environ.get("CI", "").lower() == "true" and not (PROJECT / "PKG-INFO").is_file()


def _cases() -> list[Any]:
    if not EXAMPLES.is_dir():
        if IN_CI:
            return [pytest.param(None, None, id="examples-missing")]
        return [
            pytest.param(
                None, None, id="examples-missing", marks=pytest.mark.skip(reason=f"{EXAMPLES} is absent")
            )
        ]
    return [
        pytest.param(folder.name, path, id=f"{folder.name}/{path.stem}")
        for folder in sorted(EXAMPLES.iterdir())
        if folder.is_dir()
        for path in sorted(folder.glob("*.json"))
    ]


CASES = _cases()


def test_examples_are_all_there() -> None:
    if not EXAMPLES.is_dir() and not IN_CI:
        pytest.skip(f"{EXAMPLES} is absent")
    assert EXAMPLES.is_dir(), f"the upstream examples must be present in CI: {EXAMPLES}"
    assert len(CASES) == 129


@pytest.mark.parametrize(("definition", "path"), CASES)
def test_example_round_trips(definition: str | None, path: Path | None) -> None:
    assert definition is not None and path is not None, (
        f"the upstream examples must be present in CI: {EXAMPLES}"
    )
    struct = getattr(v2026_07_28, definition)
    raw = path.read_bytes()
    value = decode(raw, struct)
    if isinstance(struct, type) and issubclass(struct, msgspec.Struct):
        assert isinstance(value, struct)
    assert json.loads(msgspec.json.encode(value)) == json.loads(raw)

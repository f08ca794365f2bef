"""Counting a codec's two-stage calls: how a test tells that ``decode_typed`` took its one pass."""

from __future__ import annotations

from typing import Any

import pytest

from mcpbind.protocol.wire import Codec


def count_two_stage_calls(codec: Codec, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the two stages (:meth:`Codec.decode`, the params' decode) as ``codec`` calls
    them from now on, in order. Use a codec of the test's own: the shared ones stay untouched."""
    calls: list[str] = []
    for stage in ("decode", "request_params", "notification_params"):
        original = getattr(codec, stage)

        def counted(*args: object, _stage: str = stage, _original: Any = original) -> Any:
            calls.append(_stage)
            return _original(*args)

        monkeypatch.setattr(codec, stage, counted)
    return calls

"""The demo runs end to end: examples/everything.py driven by examples/demo.py, on both backends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import child_env

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo.py"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_demo(backend: str) -> None:
    env = child_env()
    done = subprocess.run(
        [sys.executable, str(DEMO), "--backend", backend],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "connected to mcpbind everything demo (2026-07-28)" in out
    assert "{'result': 42}" in out
    assert "'conditions': 'sunny'" in out
    assert "3/3 1..." in out  # progress
    assert "at `arguments.a`" in out  # invalid arguments become an error result
    assert "msgspec structs all the way down." in out  # read through the template
    assert "['bullet points']" in out  # completion
    assert out.count("info: {'countdown'") == 3  # logging
    assert out.rstrip().endswith("session closed")

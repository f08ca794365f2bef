"""The protocol core does no I/O: importing it loads no event loop, thread or socket library,
and a whole exchange runs as plain function calls (every other test in tests/protocol/ is a
plain synchronous function, with no anyio marker)."""

from __future__ import annotations

import subprocess
import sys

from tests.harness import child_env

CORE = ["connection", "errors", "methods", "peek", "schema_struct", "unions", "wire"]
IO = ["anyio", "asyncio", "trio", "sniffio", "socket", "selectors", "threading", "subprocess"]


def test_importing_the_protocol_core_loads_no_io_library() -> None:
    code = (
        "import sys\n"
        + "".join(f"import mcpbind.protocol.{module}\n" for module in CORE)
        + f"print(sorted({{name.split('.')[0] for name in sys.modules}} & {set(IO)!r}))\n"
    )
    # Not measured by coverage (under `nox -s tests`), which loads threading and socket itself.
    env = {name: value for name, value in child_env().items() if not name.startswith("COVERAGE_")}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"

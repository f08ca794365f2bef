"""What a user gets from the project: an editable install of the checkout.

Each check runs the user's own steps in a fresh environment (a new venv, ``pip install -e .``).
They download packages from the index and take minutes, so they run in ``nox -s packaging``
(CI's .ci/run), which sets MCPBIND_PACKAGING_TESTS=1; elsewhere they are skipped.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent
GATE = "MCPBIND_PACKAGING_TESTS"

pytestmark = pytest.mark.skipif(
    os.environ.get(GATE) != "1", reason=f"packaging checks run in `nox -s packaging` ({GATE}=1)"
)


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH pointing into the checkout (it would hide a
    broken install), not this gate, no virtualenv of this session's."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", GATE, "VIRTUAL_ENV")}
    return {**env, **extra}


def _run(command: list[str], cwd: Path, timeout: float = 600, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, env=_clean_env(**env), capture_output=True, text=True, timeout=timeout, check=False
    )


def _check(command: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    done = _run(command, cwd, timeout)
    assert done.returncode == 0, (
        f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    )
    return done


def _bin(venv_dir: Path, name: str) -> Path:
    return venv_dir / ("Scripts" if sys.platform == "win32" else "bin") / name


# --- pip install -e . -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def editable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with ``pip install -e .`` run in the checkout; its folder."""
    venv_dir = tmp_path_factory.mktemp("editable") / "venv"
    venv.create(venv_dir, with_pip=True)
    _check([str(_bin(venv_dir, "python")), "-m", "pip", "install", "-q", "-e", "."], PROJECT)
    return venv_dir


def test_editable_install_imports_the_package_from_the_checkout(editable: Path, tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import mcpbind, mcpbind.cli, mcpbind.schema.v2025_06_18 as v
        print(mcpbind.__file__)
        print(v.__file__)
        """
    )
    done = _check([str(_bin(editable, "python")), "-c", script], tmp_path)
    runtime_init, schema_module = (Path(line) for line in done.stdout.split())
    # Editable: the modules are the checkout's files, not copies.
    assert runtime_init == PROJECT / "runtime" / "mcpbind" / "__init__.py"
    assert schema_module == PROJECT / "generated" / "mcpbind" / "schema" / "v2025_06_18" / "__init__.py"


def test_editable_install_runs_the_command(editable: Path, tmp_path: Path) -> None:
    done = _check([str(_bin(editable, "mcpbind")), "--help"], tmp_path, timeout=60)
    assert done.stdout.startswith("usage: mcpbind"), done.stdout
    assert "serve" in done.stdout and "call" in done.stdout
    assert done.stderr == ""


def test_editable_install_is_typed_for_mypy(editable: Path, tmp_path: Path) -> None:
    """A project type-checked against the editable install sees both source roots as typed."""
    app = tmp_path / "app.py"
    app.write_text(
        textwrap.dedent(
            """
            from mcpbind.schema.v2025_06_18 import Tool
            from mcpbind.server import Server

            tool = Tool(name="add", input_schema={"type": "object"})
            server = Server("app", "1.0")
            count: int = tool.name
            """
        )
    )
    command = [sys.executable, "-m", "mypy", "--strict", "--no-incremental"]
    command += ["--python-executable", str(_bin(editable, "python")), "app.py"]
    done = _run(command, tmp_path, timeout=300)
    # The one error is the deliberate one: mypy knows Tool.name is a str, so it read the stubs.
    assert (
        'Incompatible types in assignment (expression has type "str", variable has type "int")' in done.stdout
    )
    assert "Found 1 error" in done.stdout, done.stdout + done.stderr

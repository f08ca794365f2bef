"""What a user gets from the project: an editable install of the checkout, the sdist and the wheel.

Each check runs the user's own steps in a fresh environment (a new venv, ``pip install -e .``,
``python -m build``, ``nox -s tests`` from the unpacked sdist). They download packages from the
index and take minutes, so they run in ``nox -s packaging`` (CI's .ci/run), which sets
MCPBIND_PACKAGING_TESTS=1; elsewhere they are skipped.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import textwrap
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent
GATE = "MCPBIND_PACKAGING_TESTS"

pytestmark = pytest.mark.skipif(
    os.environ.get(GATE) != "1", reason=f"packaging checks run in `nox -s packaging` ({GATE}=1)"
)

# The tests of the unpacked sdist that `nox -s packaging` runs: those reading files beside the
# package (examples/, tests/peers/, codegen/, schema/) plus the codec; the whole suite runs in
# `nox -s tests` from the checkout.
SDIST_TESTS = [
    "tests/protocol/test_codec.py",
    "tests/codegen/test_codegen.py",
    "tests/schema/test_examples.py",
    "tests/test_conformance_examples.py",
    "tests/test_demo.py",
    "tests/test_cli.py",
]


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


def _project_files(*folders: str) -> set[str]:
    """The source files under ``folders`` of the checkout (no caches, nothing .gitignore'd)."""
    files: set[str] = set()
    for folder in folders:
        for path in (PROJECT / folder).rglob("*"):
            parts = path.relative_to(PROJECT).parts
            if path.is_file() and not any(p == "__pycache__" or p.startswith(".") for p in parts):
                if path.suffix not in (".pyc", ".pyo"):
                    files.add("/".join(parts))
    return files


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
            from mcpbind.server.server import Server

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


# --- the sdist and the wheel ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """``python -m build``: the sdist, and the wheel built from it."""
    out = tmp_path_factory.mktemp("dist")
    _check([sys.executable, "-m", "build", "--outdir", str(out), "."], PROJECT)
    (sdist,) = out.glob("mcpbind-*.tar.gz")
    (wheel,) = out.glob("mcpbind-*.whl")
    yield sdist, wheel


def _sdist_names(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as archive:
        return {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}


def test_the_wheel_holds_the_package_and_the_license(dists: tuple[Path, Path]) -> None:
    _, wheel = dists
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        license_name = next((n for n in names if n.endswith(".dist-info/licenses/LICENSE")), None)
        assert license_name is not None, sorted(names)
        assert archive.read(license_name) == (PROJECT / "LICENSE").read_bytes()
    # Both source roots, merged into one mcpbind folder: every module, one py.typed, nothing else.
    runtime = {name.removeprefix("runtime/") for name in _project_files("runtime/mcpbind")}
    generated = {name.removeprefix("generated/") for name in _project_files("generated/mcpbind")}
    assert {n for n in names if ".dist-info/" not in n} == runtime | generated
    assert {"mcpbind/cli.py", "mcpbind/py.typed", "mcpbind/schema/v2025_06_18/__init__.py"} <= names
    assert "License-Expression: MIT" in metadata
    assert "License-File: LICENSE" in metadata


def test_the_sdist_holds_what_its_tests_need(dists: tuple[Path, Path]) -> None:
    sdist, _ = dists
    names = _sdist_names(sdist)
    expected = _project_files("runtime", "generated", "codegen", "schema", "tests", "examples")
    assert expected - names == set()
    assert {"LICENSE", "README.md", "pyproject.toml", "noxfile.py"} <= names
    with tarfile.open(sdist) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("/LICENSE"))
        license_file = archive.extractfile(member)
        assert license_file is not None
        assert license_file.read() == (PROJECT / "LICENSE").read_bytes()


def test_the_unpacked_sdist_runs_its_tests(dists: tuple[Path, Path], tmp_path: Path) -> None:
    """From the unpacked sdist, as a user who downloaded it: ``nox -s tests`` (here over the tests
    reading files beside the package). The only tests skipped are those needing the upstream schema
    files, which the sdist does not carry (../shared/schema beside a checkout), with that reason."""
    sdist, _ = dists
    with tarfile.open(sdist) as archive:
        if hasattr(tarfile, "data_filter"):
            archive.extractall(tmp_path, filter="data")
        else:  # Python before 3.10.12 has no filters; the archive is the one just built
            archive.extractall(tmp_path)
    (unpacked,) = tmp_path.glob("mcpbind-*")
    command = [sys.executable, "-m", "nox", "--non-interactive", "-s", "tests", "--"]
    command += ["-q", "-p", "no:cacheprovider", *SDIST_TESTS]
    # CI=true, as CI services set it: the strictest case (tests that may skip locally must not in CI).
    done = _run(command, unpacked, timeout=1800, CI="true")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    summary = re.findall(r"^=*\s*(\d+ \w+(?:, \d+ \w+)*) in [\d.]+s", output, re.MULTILINE)
    assert summary, output[-6000:]
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", summary[-1])}
    assert counts.get("passed", 0) > 100 and set(counts) <= {"passed", "skipped"}, summary[-1]
    skip_reasons = re.findall(r"^SKIPPED \[\d+\] [^:]+:\d+: (.*)$", output, re.MULTILINE)
    assert len(skip_reasons) > 0 and all("shared/schema" in r for r in skip_reasons), skip_reasons

"""Developer sessions. `nox -s tests` is what CI runs first (see README and .ci/run)."""

from __future__ import annotations

import os

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests", "typecheck", "lint"]

# Pinned so that `regen -- --check` formats byte-identically on every machine.
RUFF = "ruff==0.17.6"
MYPY = "mypy==2.4.1"
TEST_DEPS = ["pytest>=8", "anyio>=4.7", "trio>=0.26", "hypothesis>=6.100", "typing_extensions>=4.6", MYPY]
CODEGEN_DEPS = ["jsonpatch>=1.33", RUFF]
# HTTP: the client's libraries, and both ASGI servers the app is tested under.
HTTP_DEPS = ["httpx>=0.28,<1", "httpx-sse>=0.4", "uvicorn>=0.30", "hypercorn>=0.17"]
# The official SDK, as a peer for interop tests.
INTEROP_DEPS = ["mcp>=2.3,<3"]
# The peers the benchmarks compare against (the official SDK's wire types, untyped orjson).
BENCH_DEPS = ["orjson>=3.10", "mcp-types>=2", "mcp>=2.3,<3", "trio>=0.26"]


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite against the installed wheel, on asyncio and trio."""
    session.install(".", *TEST_DEPS, *CODEGEN_DEPS, *HTTP_DEPS)
    session.run("pytest", "--ignore=tests/interop", *session.posargs)


@nox.session
def interop(session: nox.Session) -> None:
    """Against the official Python SDK (``mcp`` from PyPI): its client and server over stdio."""
    session.install(".", *TEST_DEPS, *HTTP_DEPS, *INTEROP_DEPS)
    session.run("pytest", "tests/interop", *session.posargs)


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over runtime, generated code, codegen, tests and benchmarks."""
    session.install(".", *TEST_DEPS, *CODEGEN_DEPS, *HTTP_DEPS, *BENCH_DEPS, *INTEROP_DEPS)
    session.run(
        "mypy",
        "runtime/mcpbind",
        "generated/mcpbind",
        "codegen",
        "tests",
        "bench",
        "examples",
        *session.posargs,
    )


@nox.session
def lint(session: nox.Session) -> None:
    session.install(RUFF)
    session.run("ruff", "check", "runtime", "codegen", "tests", "bench", "examples", "noxfile.py")
    session.run(
        "ruff", "format", "--check", "runtime", "codegen", "tests", "bench", "noxfile.py", "generated"
    )


@nox.session
def regen(session: nox.Session) -> None:
    """Regenerate generated/ from the pinned schemas; `-- --check` only reports drift."""
    session.install(*CODEGEN_DEPS)
    session.run("python", "-m", "codegen", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks side by side with orjson, the official SDK and a raw floor (see bench/README.md)."""
    session.install(".", *BENCH_DEPS)
    env = {"PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0")}
    session.run("python", "bench/codec.py", *session.posargs, env=env)
    session.run("python", "bench/stdio.py", *session.posargs, env=env)


@nox.session
def demo(session: nox.Session) -> None:
    """Start examples/everything.py and use each of its features from a client, printing it all."""
    session.install(".", "trio>=0.26")
    session.run("python", "examples/demo.py", *session.posargs)

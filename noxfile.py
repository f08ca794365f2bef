"""Developer sessions. `nox -s tests` is what CI runs first (see README and .ci/run)."""

from __future__ import annotations

import json
import os
import subprocess

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests", "typecheck", "lint"]

# Pinned so that `regen -- --check` formats byte-identically on every machine.
RUFF = "ruff==0.17.6"
MYPY = "mypy==2.4.1"
TEST_DEPS = ["pytest>=8", "anyio>=4.7", "trio>=0.26", "hypothesis>=6.100", "typing_extensions>=4.6", MYPY]
CODEGEN_DEPS = ["jsonpatch>=1.33", RUFF]
# 2.17: the private_modules contract.
IMPORT_LINTER = "import-linter==2.17"
# HTTP: the client's libraries, both ASGI servers the app is tested under, the OAuth extra's libraries
# and the Redis extra's.
HTTP_DEPS = [
    "httpx>=0.28,<1",
    "httpx-sse>=0.4",
    "uvicorn>=0.30",
    # What makes the embedded server fast where wheels exist (the http extra brings them too).
    "httptools>=0.6; platform_python_implementation == 'CPython'",
    "uvloop>=0.19; sys_platform != 'win32' and platform_python_implementation == 'CPython'",
    "hypercorn>=0.17",
    "sniffio>=1.3",
    "joserfc>=1.1",
    "authlib>=1.6",
    # The redis extra: the Redis store of workers sharing one Redis.
    "coredis>=6",
]
# The official SDK, as a peer for interop tests.
INTEROP_DEPS = ["mcp>=2.3,<3", "fastmcp==4.2.3"]
# The peers the benchmarks compare against (the official SDK's wire types, untyped orjson); the
# embedded HTTP servers bench/http_servers.py compares (hypercorn, Granian, uvloop); matplotlib: the
# chart of a suite run (bench/chart.py).
BENCH_DEPS = [
    "orjson>=3.10",
    "mcp-types>=2",
    "mcp>=2.3,<3",
    "trio>=0.26",
    "hypercorn>=0.17",
    "granian>=2.5",
    "uvloop>=0.19; sys_platform != 'win32' and platform_python_implementation == 'CPython'",
    "matplotlib>=3.8",
]

# Mutation testing (mutation/, `nox -s mutants`). Pinned: mutation/mutants.py reads the names mutmut
# gives mutants and the verdict files it writes, which change between versions.
MUTMUT = "mutmut==3.8.1"


# mcpbind's speed tricks (runtime/mcpbind/fastpath.py) are turned off by MCPBIND_FASTPATH=0.
FASTPATH_SWITCH = "MCPBIND_FASTPATH"
# Tests that run no mcpbind runtime code (code generation, the generated structs against the schemas'
# samples, mypy over snippets, pure OAuth documents): the same on both paths, so the plain path skips
# them (a quarter of the suite's time).
SAME_ON_BOTH_PATHS = [
    "tests/codegen",
    "tests/oauth",
    "tests/schema/test_examples.py",
    "tests/schema/test_generated_docs.py",
    "tests/schema/test_properties.py",
    "tests/schema/test_samples_2025_06_18.py",
    "tests/schema/test_samples_other_versions.py",
    "tests/test_typing.py",
]
# Tests in files that also run runtime code: mypy over the README's blocks and over the public surface.
SAME_ON_BOTH_PATHS_TESTS = [
    "tests/test_readme.py::test_blocks_pass_mypy_strict",
    "tests/test_surface.py::test_the_surface_type_checks",
]


# Branch coverage of the suite ([tool.coverage] in pyproject.toml), combined and printed at the end
# of `nox -s tests`. MCPBIND_COVERAGE chooses the runs measured: "fast" (the default: the fast path's
# run only; coverage.py makes the suite's CPU time grow by about 70% on Python 3.11, and the plain
# path's run adds only the fallbacks of mcpbind.fastpath), "both", or "0" (none). A full run
# (both paths, no arguments, the default) fails when lines or branches fall more than
# COVERAGE_MARGIN points under the totals recorded in COVERAGE_FLOOR. 7.10: `patch = ["subprocess"]`.
COVERAGE = "coverage>=7.10"
# The suite runs in MCPBIND_TEST_WORKERS processes at once (pytest-xdist; default: the CPUs, at most
# 4; "1" runs it in one process). On CI's two cores this nearly halves the suite's wall time: most
# tests keep one core busy in the test process. Coverage follows the workers through the same
# `patch = ["subprocess"]` that measures the stdio children.
XDIST = "pytest-xdist>=3.6"
WORKERS_SWITCH = "MCPBIND_TEST_WORKERS"
COVERAGE_SWITCH = "MCPBIND_COVERAGE"
COVERAGE_FLOOR = "tests/coverage_floor.json"
COVERAGE_MARGIN = 0.5
# What is reported: the installed package the suite tests. (Children of a few tests import mcpbind
# from the checkout's folders or from a regenerated copy: those files would count as unexecuted.)
COVERAGE_INCLUDE = "--include=*/site-packages/mcpbind/*"


def coverage_totals(session: nox.Session) -> dict[str, float]:
    """Combine the measurements of the run, print the report and return its totals in percent."""
    session.run("coverage", "combine", "--quiet")
    session.run("coverage", "report", COVERAGE_INCLUDE, "--skip-covered", "--sort=cover")
    report = os.path.join(session.create_tmp(), "coverage.json")
    session.run("coverage", "json", COVERAGE_INCLUDE, "--quiet", "-o", report)
    with open(report, encoding="utf-8") as file:
        totals = json.load(file)["totals"]
    lines = 100 * totals["covered_lines"] / max(totals["num_statements"], 1)
    branches = 100 * totals["covered_branches"] / max(totals["num_branches"], 1)
    return {"lines": round(lines, 2), "branches": round(branches, 2)}


def check_coverage_floor(session: nox.Session, totals: dict[str, float]) -> None:
    """Fail when a total fell more than COVERAGE_MARGIN under the recorded floor."""
    if not os.path.exists(COVERAGE_FLOOR):
        with open(COVERAGE_FLOOR, "w", encoding="utf-8") as file:
            file.write(json.dumps(totals) + "\n")
        session.log(f"coverage: the totals recorded in {COVERAGE_FLOOR} (commit it)")
        return
    with open(COVERAGE_FLOOR, encoding="utf-8") as file:
        floor: dict[str, float] = json.load(file)
    fallen = [
        f"{kind} {totals[kind]:.2f}% < {floor[kind]:.2f}% - {COVERAGE_MARGIN}"
        for kind in ("lines", "branches")
        if totals[kind] < floor[kind] - COVERAGE_MARGIN
    ]
    if fallen:
        session.error(f"coverage fell under {COVERAGE_FLOOR}: {'; '.join(fallen)}")
    risen = [kind for kind in ("lines", "branches") if totals[kind] > floor[kind] + COVERAGE_MARGIN]
    if risen:
        session.log(f"coverage rose: raise {COVERAGE_FLOOR} to {json.dumps(totals)}")


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite against the installed wheel, on asyncio and trio, twice: on the fast path,
    then on the plain path (MCPBIND_FASTPATH=0: every speed trick of mcpbind.fastpath replaced by
    its plain-anyio equivalent), quietly and without the tests that run no runtime code
    (SAME_ON_BOTH_PATHS). With MCPBIND_FASTPATH set, only on that path. The fast path's run is
    measured by coverage.py, with branches (MCPBIND_COVERAGE): the totals are printed at the end,
    and a full run fails if they fell (COVERAGE_FLOOR)."""
    session.install(".", *TEST_DEPS, *CODEGEN_DEPS, *HTTP_DEPS, COVERAGE, XDIST)
    chosen = os.environ.get(FASTPATH_SWITCH)
    workers = os.environ.get(WORKERS_SWITCH, "").strip() or str(min(os.cpu_count() or 1, 4))
    if not workers.isdigit() or int(workers) < 1:
        session.error(f"{WORKERS_SWITCH} is a number of processes (1 or more), not {workers!r}")
    # A file's tests stay together, in their order, in one worker (as in a run in one process).
    parallel = ["-n", workers, "--dist", "loadfile"] if int(workers) > 1 else []
    plain = ["-q", *(f"--ignore={path}" for path in SAME_ON_BOTH_PATHS)]
    plain += [f"--deselect={test}" for test in SAME_ON_BOTH_PATHS_TESTS]
    paths = [("fast", "1", []), ("plain", "0", plain)]
    if chosen is not None:
        paths = [path for path in paths if (path[1] == "0") == (chosen.strip() == "0")]
    measure = os.environ.get(COVERAGE_SWITCH, "fast").strip()
    measured = {"0": set(), "fast": {"fast"}, "both": {"fast", "plain"}}.get(measure)
    if measured is None:
        session.error(f'{COVERAGE_SWITCH} is "fast", "both" or "0", not {measure!r}')
    measured &= {name for name, _, _ in paths}
    if measured:
        session.run("coverage", "erase")
    for name, switch, options in paths:
        session.log(f"mcpbind: the test suite on the {name} path ({FASTPATH_SWITCH}={switch})")
        runner = ["coverage", "run", "-m", "pytest"] if name in measured else ["pytest"]
        session.run(
            *runner,
            *parallel,
            "--ignore=tests/interop",
            *options,
            *session.posargs,
            env={FASTPATH_SWITCH: switch},
        )
    if measured:
        totals = coverage_totals(session)
        runs = " and ".join(f"the {name} path" for name, _, _ in paths if name in measured)
        session.log(
            f"mcpbind: coverage over {runs}: lines {totals['lines']:.2f}%, branches {totals['branches']:.2f}%"
        )
        if measure == "fast" and len(paths) == 2 and not session.posargs:
            check_coverage_floor(session, totals)


@nox.session
def packaging(session: nox.Session) -> None:
    """What users install, each in a fresh environment (tests/test_packaging.py): `pip install -e .`
    (imports, the `mcpbind` command, mypy over it), the sdist and the wheel (their files, the
    license) and `nox -s tests` from the unpacked sdist over the tests that read its other files."""
    session.install("pytest>=8", "build>=1.2", "nox>=2024.4", MYPY)
    session.run("pytest", "tests/test_packaging.py", *session.posargs, env={"MCPBIND_PACKAGING_TESTS": "1"})


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
        "mutation",
        *session.posargs,
    )


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, and the layer contracts of pyproject.toml's [tool.importlinter] (import-linter)."""
    session.install(RUFF, IMPORT_LINTER)
    session.run("ruff", "check", "runtime", "codegen", "tests", "bench", "examples", "mutation", "noxfile.py")
    session.run(
        "ruff",
        "format",
        "--check",
        "runtime",
        "codegen",
        "tests",
        "bench",
        "mutation",
        "noxfile.py",
        "generated",
    )
    # mcpbind has two source roots, joined into one package by runtime/mcpbind/__init__.py when it is
    # imported (it needs nothing installed). import-linter finds the package's folders through its
    # spec, so importing mcpbind first makes it read both roots: without that it sees no
    # mcpbind.schema and the layers contract fails on the missing layer.
    roots = os.pathsep.join(os.path.abspath(root) for root in ("runtime", "generated"))
    lint_imports = "import mcpbind; from importlinter.cli import lint_imports_command; lint_imports_command()"
    session.run("python", "-c", lint_imports, "--no-cache", env={"PYTHONPATH": roots})


@nox.session
def regen(session: nox.Session) -> None:
    """Regenerate generated/ from the pinned schemas; `-- --check` only reports drift."""
    session.install(*CODEGEN_DEPS)
    session.run("python", "-m", "codegen", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """The benchmark suite (`python -m bench`): mcpbind beside the official SDK, FastMCP and raw floors
    over stdio and HTTP, client side, import time and the codec (see bench/README.md). Arguments go
    to it: `nox -s bench -- --quick`, `nox -s bench -- stdio --rounds 3`. The official SDK and FastMCP
    for stdio, the clients and import time are installed by the suite into .bench/venvs/; for the proxy
    scenario, mcp-proxy there too and supergateway with npm into .bench/npm/ (Node.js needed)."""
    # The redis extra: the scale benchmark's workers share a Redis store.
    session.install(".[redis]", *BENCH_DEPS)
    # The HTTP benchmark's client (httpx) and the HTTP parser it serves every server with (httptools);
    # py-spy: where a server that stopped answering is stuck, in the report.
    session.install("httpx>=0.28,<1", "httptools>=0.6", "py-spy>=0.3")
    # uvloop: mcpbind's HTTP servers run as `pip install "mcpbind[http]"` brings them (the official
    # SDK's in its venv, with what `pip install mcp` brings: bench/streamable_http.py --install user).
    session.install("uvloop>=0.19; sys_platform != 'win32'")
    env = {"PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0")}
    session.run("python", "-m", "bench", *session.posargs, env=env)


@nox.session
def mutants(session: nox.Session) -> None:
    """Mutation testing of the protocol core (issue 19): mutmut mutates the codec, the connection,
    the URI templates and the HTTP session logic, group by group (mutation/groups.py), and runs the
    fast in-process tests that reach each mutant; mutation/REPORT.md gets the score per module and
    the mutants not detected. Arguments go to `python -m mutation`: groups (all by default),
    `--jobs N`, `--keep` (resume), `--report-only`: `nox -s mutants -- uri_template`. Slow (minutes
    to an hour a group), so not in CI; see mutation/README.md."""
    # mcpbind is not installed: the tests import the mutated copy mutmut makes (mutation/run.py),
    # so its dependencies are installed instead. jsonpatch: codegen.pins, which tests/protocol reads.
    session.install(MUTMUT, "msgspec>=0.19", "jsonpatch>=1.33", *TEST_DEPS, *HTTP_DEPS)
    session.run("python", "-m", "mutation", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """Start examples/everything.py and use each of its features from a client, printing it all."""
    session.install(".", "trio>=0.26")
    session.run("python", "examples/demo.py", *session.posargs)


# The official MCP conformance suite (npm), installed by ../shared/conformance/setup.sh; the client
# scenarios examples/conformance_client.py plays (the auth/* ones are not supported yet).
CONFORMANCE_CLIENT_SCENARIOS = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    # OAuth 2.1, the authorization code flow (examples/conformance_client.py AUTH_SCENARIOS).
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    # OAuth without a user (examples/conformance_client.py MACHINE_AUTH_SCENARIOS).
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/cross-app-access-complete-flow",
]


# The parts of `nox -s conformance`, each runnable alone (`nox -s conformance -- proxy`).
CONFORMANCE_PARTS = ("server", "client", "fleet", "proxy")


@nox.session
def conformance(session: nox.Session) -> None:
    """The official conformance suite against examples/conformance_server.py (every server scenario)
    and examples/conformance_client.py (its client scenarios), each on asyncio and on trio; every
    server scenario again against three `mcpbind serve --store` processes of that server sharing
    one Redis behind nginx, a round-robin load balancer with no affinity (on asyncio:
    tests/fleet.py starts and stops them; Debian's redis-server and nginx); and every server
    scenario through `mcpbind proxy` serving that server, run over stdio, over Streamable HTTP
    (on asyncio; the proxy speaking the newest version to it, then pinned to 2025-11-25). Any FAILURE or WARNING fails. Arguments choose parts (CONFORMANCE_PARTS:
    server, client, fleet, proxy): `nox -s conformance -- proxy`; all by default."""
    import shutil

    parts = list(session.posargs) or list(CONFORMANCE_PARTS)
    unknown = [part for part in parts if part not in CONFORMANCE_PARTS]
    if unknown:
        session.error(f"conformance: unknown parts {unknown}; choose from {list(CONFORMANCE_PARTS)}")
    setup = os.path.join("..", "shared", "conformance", "setup.sh")
    if not os.path.isfile(setup):
        session.error(
            f"{setup} is missing: the conformance suite is installed by the shared folder beside the "
            "repository (../shared/conformance), which this checkout does not have"
        )
    exports = session.run("bash", setup, ".conformance", external=True, silent=True) or ""
    tools = dict(
        line.removeprefix("export ").split("=", 1)
        for line in exports.splitlines()
        if line.startswith("export ")
    )
    node, suite, loopback = tools["N22"], tools["CONF"], tools["LOOP"]
    # hypercorn: what serve_http runs on trio; auth: the client's OAuth scenarios (Authlib).
    # redis: the store of the servers behind nginx.
    session.install(".[http,trio,auth,redis]", "hypercorn>=0.17")
    python = os.path.join(session.bin, "python")
    results = os.path.join(session.create_tmp(), "conformance-results")
    shutil.rmtree(results, ignore_errors=True)
    os.makedirs(results, exist_ok=True)
    expected = _conformance_scenarios(session, node, suite)

    not_clean: list[str] = []
    for backend in ("asyncio", "trio"):
        if "server" in parts:
            command = [python, "examples/conformance_server.py", "--port", "{port}", "--backend", backend]
            not_clean += _conformance_server_run(
                session, node, suite, command, expected, results, f"server-{backend}", f"server on {backend}"
            )
        if "client" in parts:
            folder = os.path.join(results, f"client-{backend}")
            client = f"{python} examples/conformance_client.py --backend {backend}"
            for scenario in CONFORMANCE_CLIENT_SCENARIOS:
                command = [node, "--require", loopback, suite, "client", "--command", client]
                command += ["--scenario", scenario, "--timeout", "60000", "-o", folder]
                if _run_logged(session, command) != 0:
                    not_clean.append(f"{scenario} (client on {backend}: exit status)")
            bad = _conformance_report(
                session, f"client on {backend}", folder, set(CONFORMANCE_CLIENT_SCENARIOS)
            )
            not_clean += [f"{name} (client on {backend})" for name in bad]

    if "fleet" in parts:
        # The server scenarios through nginx, each request to the next of three servers sharing Redis.
        folder = os.path.join(results, "server-fleet")
        server_log = os.path.join(results, "server-fleet.log")
        command = [python, "-m", "tests.fleet", "examples/conformance_server.py:build_server"]
        command += ["--copies", "3", "--backend", "asyncio", "--logs", server_log, "--"]
        command += [node, suite, "server", "--url", "{url}", "--suite", "all", "-o", folder]
        if _run_logged(session, command) != 0:
            not_clean.append(f"the server behind nginx: exit status (log {server_log})")
        bad = _conformance_report(session, "3 servers sharing Redis behind nginx", folder, expected)
        not_clean += [f"{name} (3 servers behind nginx; log {server_log})" for name in bad]

    if "proxy" in parts:
        # The server over stdio, served over Streamable HTTP by `mcpbind proxy` (which starts it):
        # the proxy speaking to it the newest version both speak (2026-07-28, stateless), and
        # pinned to 2025-11-25 (a session), so that both directions of the eras' bridge are run.
        for upstream in (None, "2025-11-25"):
            command = [python, "-m", "mcpbind", "proxy", "--port", "{port}", "--backend", "asyncio"]
            command += ["--upstream-version", upstream] if upstream else []
            command += ["--", python, "examples/conformance_server.py", "--stdio", "--backend", "asyncio"]
            name, title = "server-proxy", "server through mcpbind proxy"
            if upstream:
                name, title = f"{name}-{upstream}", f"{title} (upstream pinned to {upstream})"
            not_clean += _conformance_server_run(
                session, node, suite, command, expected, results, name, title
            )
    if not_clean:
        session.error(f"conformance: not clean: {', '.join(not_clean)}; results in {results}")


def _conformance_server_run(
    session: nox.Session,
    node: str,
    suite: str,
    command: list[str],
    expected: set[str],
    results: str,
    name: str,
    title: str,
) -> list[str]:
    """Start ``command`` (its ``{port}`` a free port of 127.0.0.1) until it answers HTTP there, run
    every server scenario against its /mcp, stop it; the scenarios not clean, described."""
    port = _free_loopback_port()
    command = [part.replace("{port}", str(port)) for part in command]
    server_log = os.path.join(results, f"{name}.log")
    folder = os.path.join(results, name)
    with open(server_log, "wb") as log:
        session.log(" ".join(command))
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            _wait_until_answering(session, server, port, server_log)
            url = f"http://127.0.0.1:{port}/mcp"
            # The exit status counts failures only; the results, read below, show warnings too.
            _run_logged(session, [node, suite, "server", "--url", url, "--suite", "all", "-o", folder])
        finally:
            _stop_process(server)
    bad = _conformance_report(session, title, folder, expected)
    return [f"{scenario} ({title}; log {server_log})" for scenario in bad]


def _run_logged(session: nox.Session, command: list[str]) -> int:
    """Run ``command`` with its output in the session's; its exit status (no exception)."""
    session.log(" ".join(command))
    return subprocess.run(command, check=False).returncode


def _conformance_scenarios(session: nox.Session, node: str, suite: str) -> set[str]:
    listing = session.run(node, suite, "list", "--server", external=True, silent=True) or ""
    return {
        line.strip().removeprefix("- ").split(" ", 1)[0]
        for line in listing.splitlines()
        if line.strip().startswith("- ")
    }


def _conformance_report(session: nox.Session, title: str, folder: str, expected: set[str]) -> list[str]:
    """Print one line per scenario (the latest run of each) and return those not clean: a FAILURE
    or WARNING check, or an expected scenario that left no results."""
    import json
    import re
    from pathlib import Path

    latest: dict[str, Path] = {}
    for checks in sorted(Path(folder).rglob("checks.json")):  # timestamps sort: the last run wins
        # (auth/* scenarios leave their results one folder deeper: auth/metadata-default-<time>)
        run = checks.parent.relative_to(folder).as_posix()
        name = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", run).removeprefix("server-")
        latest[name] = checks
    bad: list[str] = []
    session.log(f"conformance, {title}:")
    for name in sorted(expected | set(latest)):
        if name not in latest:
            session.log(f"MISSING  {name}: no results")
            bad.append(name)
            continue
        checks = json.loads(latest[name].read_text())
        problems = [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]
        passed = sum(1 for c in checks if c.get("status") == "SUCCESS")
        session.log(f"{'FAIL' if problems else 'PASS'}  {name}: {passed} checks passed, {len(problems)} not")
        for check in problems:
            session.log(f"      {check.get('status')} {check.get('id')}: {check.get('errorMessage', '')}")
        if problems:
            bad.append(name)
    return bad


def _free_loopback_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_until_answering(
    session: nox.Session, process: subprocess.Popen[bytes], port: int, log_path: str
) -> None:
    """Until the server answers HTTP on 127.0.0.1:port (any status will do), at most 30 s."""
    import http.client
    import time

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            with open(log_path, encoding="utf-8", errors="replace") as log:
                session.error(f"the conformance server exited with {process.returncode}:\n{log.read()}")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            connection.request("GET", "/mcp")
            connection.getresponse().read()
            return
        except OSError:
            time.sleep(0.2)
        finally:
            connection.close()
    session.error(f"the conformance server did not answer on port {port} within 30 s (log: {log_path})")


def _stop_process(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()

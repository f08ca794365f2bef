"""What the mcpbind command says about a command line it cannot carry out, run in this process
(``mcpbind.cli.main``): a bad argument exits 2, a server that cannot be loaded or started 1,
each with one line on stderr (``mcpbind: ...``) and nothing on stdout; what ``main`` makes of
the failures that come out of a run (inside task groups, Ctrl-C, a missing extra, a bug).
test_cli.py and test_cli_failures.py run the command as a child process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpbind import cli
from mcpbind.commands.failures import CommandError
from mcpbind.protocol.errors import CONNECTION_CLOSED

SERVER_FILE = str(Path(__file__).parent / "peers" / "cli_server.py")

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup, ExceptionGroup


@pytest.fixture(autouse=True)
def _imports_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading a server file adds its folder to ``sys.path`` and the module to ``sys.modules``:
    both are put back after each test."""
    monkeypatch.setattr(sys, "path", [*sys.path])
    for stem in ("broken", "syntax", "two", "none", "servers", "needs_more"):
        monkeypatch.delitem(sys.modules, stem, raising=False)


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    """What the command printed on stderr, which must be one line, with nothing on stdout."""
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("mcpbind: "), err
    return lines[0]


def write(folder: Path, name: str, source: str) -> str:
    path = folder / name
    path.write_text(source)
    return str(path)


SERVERS = """
from mcpbind.server.server import Server

VALUE = 3
one = Server("one", "1")


def broken_factory():
    raise ValueError("no configuration")
"""


# -- serve: loading the server ------------------------------------------------------------------


def test_serve_a_file_that_does_not_exist(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "no/such/server.py"]) == 1
    assert one_line(capsys) == "mcpbind: no such file: no/such/server.py"


@pytest.mark.parametrize(
    ("name", "source", "said"),
    [
        ("broken.py", "raise RuntimeError('boom')\n", "RuntimeError: boom ("),
        ("syntax.py", "def (:\n", "SyntaxError: "),
    ],
    ids=["raises", "syntax-error"],
)
def test_serve_a_file_that_cannot_be_loaded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, source: str, said: str
) -> None:
    path = write(tmp_path, name, source)
    assert cli.main(["serve", path]) == 1
    line = one_line(capsys)
    assert line.startswith(f"mcpbind: cannot load {path}: ") and said in line


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("from mcpbind.server.server import Server\na = Server('a', '1')\nb = Server('b', '1')\n", 2),
        ("x = 1\n", 0),
    ],
    ids=["two", "none"],
)
def test_serve_a_file_without_one_server_asks_to_name_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, found: int
) -> None:
    path = write(tmp_path, "two.py" if found == 2 else "none.py", source)
    assert cli.main(["serve", path]) == 1
    assert one_line(capsys) == f"mcpbind: name the server in {path} as {path}:ATTR ({found} found)"


@pytest.mark.parametrize(
    ("attr", "said"),
    [
        ("missing", "has no attribute 'missing'"),
        ("VALUE", "servers.py:VALUE is not an mcpbind Server"),
        ("broken_factory", "servers.py:broken_factory() failed: ValueError: no configuration ("),
    ],
)
def test_serve_an_attribute_that_is_no_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], attr: str, said: str
) -> None:
    path = write(tmp_path, "servers.py", SERVERS)
    assert cli.main(["serve", f"{path}:{attr}"]) == 1
    assert said in one_line(capsys)


def test_serve_a_module_whose_import_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "needs_more.py", "import mcpbind_no_such_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert cli.main(["serve", "needs_more"]) == 1
    line = one_line(capsys)
    assert line.startswith("mcpbind: cannot import needs_more: ModuleNotFoundError: ")
    assert "mcpbind_no_such_dependency" in line


# -- serve: options -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--workers", "0"], "--workers takes a number of processes, 1 or more (not 0)"),
        (["--workers", "2"], "--workers: for HTTP only (add --transport http)"),
        (["--store", "redis://127.0.0.1:1/0"], "--store: for HTTP only (add --transport http)"),
        (["--transport", "http", "--store", "carrier://pigeon"], "--store carrier://pigeon: "),
    ],
    ids=["no-workers", "workers-on-stdio", "store-on-stdio", "unknown-store"],
)
def test_serve_options_that_cannot_work_exit_2(
    capsys: pytest.CaptureFixture[str], options: list[str], said: str
) -> None:
    assert cli.main(["serve", SERVER_FILE, *options]) == 2
    assert said in one_line(capsys)


def test_an_option_argparse_refuses_exits_2_with_the_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["serve", SERVER_FILE, "--transport", "carrier-pigeon"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: mcpbind serve")
    assert err.splitlines()[-1].startswith("mcpbind serve: error: argument --transport: invalid choice")


def test_no_command_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main([])
    assert info.value.code == 2
    assert "the following arguments are required: command" in capsys.readouterr().err


# -- call -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["tools/delete"], "unsupported method tools/delete (one of "),
        (["tools/call"], "tools/call needs "),
        (["resources/read"], "resources/read needs "),
        (["tools/list", "--timeout", "0"], "--timeout takes a positive number of seconds"),
        (["tools/call", "add", "--arg", "a"], "--arg takes key=value, not 'a'"),
        (["tools/call", "add", "--json", "[1, 2]"], "--json takes a JSON object, not [1, 2]"),
        (["tools/call", "add", "--json", "{a"], "--json is not valid JSON: "),
        (["tools/list", "--protocol-version", "1999-01-01"], "--protocol-version 1999-01-01: not one of"),
    ],
    ids=["method", "tool", "uri", "timeout", "arg", "json-array", "json-broken", "version"],
)
def test_call_arguments_that_cannot_work_exit_2(
    capsys: pytest.CaptureFixture[str], arguments: list[str], said: str
) -> None:
    assert cli.main(["call", f"{sys.executable} {SERVER_FILE}", *arguments]) == 2
    assert said in one_line(capsys)


BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])


@BACKENDS
def test_call_an_empty_server_command_exits_2(capsys: pytest.CaptureFixture[str], backend: str) -> None:
    assert cli.main(["call", "  ", "tools/list", "--backend", backend]) == 2
    assert one_line(capsys) == "mcpbind: the server command is empty"


@BACKENDS
def test_call_a_server_command_that_does_not_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], backend: str
) -> None:
    missing = tmp_path / "no-such-server"
    assert cli.main(["call", str(missing), "tools/list", "--timeout", "20", "--backend", backend]) == 1
    line = one_line(capsys)
    assert line.startswith(f"mcpbind: cannot reach {missing}: ") and "No such file" in line


@BACKENDS
def test_call_a_server_that_exits_at_once(capsys: pytest.CaptureFixture[str], backend: str) -> None:
    server = f"{sys.executable} -c 'import sys; sys.exit(3)'"
    assert cli.main(["call", server, "tools/list", "--timeout", "20", "--backend", backend]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    error = json.loads(err)  # a JSON-RPC error, as the command's doc says
    assert error["code"] == CONNECTION_CLOSED and isinstance(error["message"], str)


# -- proxy ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ([], "proxy: give a URL, or -- and the command of a stdio server"),
        (["--stdio", "http://127.0.0.1:9/mcp"], "proxy: --stdio goes with --config"),
        (["http://127.0.0.1:9/mcp", "extra"], "proxy: a URL takes no arguments after it"),
        (["--header", "no-colon", "--", "server"], "proxy: --header 'no-colon': expected NAME:VALUE"),
        (["--max-in-flight", "0", "--", "server"], "proxy: --max-in-flight must be at least 1"),
        (
            ["--config", "servers.json", "--", "server"],
            "proxy: --config names the servers; give no other server",
        ),
        (["--config", "no/such/servers.json"], "proxy: "),
    ],
    ids=["nothing", "stdio-alone", "url-and-more", "header", "in-flight", "config-and-server", "no-config"],
)
def test_proxy_arguments_that_cannot_work_exit_2(
    capsys: pytest.CaptureFixture[str], arguments: list[str], said: str
) -> None:
    assert cli.main(["proxy", *arguments]) == 2
    assert said in one_line(capsys)


# -- what main makes of a failure ---------------------------------------------------------------


def test_a_command_error_inside_a_task_group_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def fails(args: object) -> int:
        raise ExceptionGroup("tasks", [ExceptionGroup("inner", [CommandError("it broke", 2)])])

    monkeypatch.setattr(cli, "serve", fails)
    assert cli.main(["serve", SERVER_FILE]) == 2
    assert one_line(capsys) == "mcpbind: it broke"


@pytest.mark.parametrize(("command", "code"), [("serve", 0), ("call", 130)])
def test_ctrl_c(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str, code: int
) -> None:
    def interrupted(args: object) -> int:
        raise BaseExceptionGroup("tasks", [KeyboardInterrupt()])

    monkeypatch.setattr(cli, "serve", interrupted)
    monkeypatch.setattr(cli, "check_call", interrupted)
    arguments = [SERVER_FILE] if command == "serve" else ["server", "tools/list"]
    assert cli.main([command, *arguments]) == code
    assert capsys.readouterr() == ("", "")  # quietly


def test_a_missing_extra_is_named(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_uvicorn(args: object) -> int:
        try:
            raise ModuleNotFoundError("No module named 'uvicorn'", name="uvicorn")
        except ModuleNotFoundError as exc:
            raise LookupError("no server") from exc

    monkeypatch.setattr(cli, "serve", no_uvicorn)
    assert cli.main(["serve", SERVER_FILE, "--transport", "http"]) == 1
    line = one_line(capsys)
    assert "serving over HTTP needs the http extra" in line and 'pip install "mcpbind[http]"' in line


def test_any_other_failure_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def bug(args: object) -> int:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(cli, "serve", bug)
    with pytest.raises(ZeroDivisionError):
        cli.main(["serve", SERVER_FILE])

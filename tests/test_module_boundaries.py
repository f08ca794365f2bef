"""No module reaches into another's private names (issue 13).

Every module of the runtime (and of ``examples/`` and ``bench/``) is parsed with :mod:`ast`
and checked:

- no ``from mcpbind.x import _name`` / ``import mcpbind.x._name`` of a private name of another
  module;
- a private module (``mcpbind.transports.http._asgi``) is imported only from within its own package
  (``mcpbind.transports.http``);
- no ``module._name`` on a module imported from mcpbind (``stdio._foo``);
- no ``obj._name`` (``obj`` not ``self``/``cls``) where ``_name`` is not defined in the module
  doing it: a private attribute is used only in the module that defines it (its class, or a
  helper next to it). The few uses of a third party's private name are listed below with why.

Dunder names (``__init__``, ``__aexit__``) are public protocol and always allowed.

The layers, the absence of import cycles and the private-module rule above are also contracts of
import-linter (pyproject.toml's ``[tool.importlinter]``, run by ``nox -s lint``); the last test
here checks that every module of the runtime is in one of its layers, so a new module cannot
slip past them.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "runtime"

# (module, private attribute): uses of a private name of a module that is not mcpbind's, each
# kept on purpose.
FOREIGN_PRIVATE_ALLOWED = {
    # asyncio's ``_get_running_loop`` returns None off a loop instead of raising, cheaply: the
    # stdio reader's watch asks it on each wait whether it still runs on its loop. A speed trick
    # on a library's internals, so it lives in mcpbind.fastpath, the one module for those.
    ("mcpbind.fastpath", "_get_running_loop"),
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@dataclass(frozen=True)
class Source:
    module: str  # dotted name, "mcpbind.transports.http.client"
    package: str  # the package it is in, "mcpbind.transports.http"
    path: Path
    tree: ast.Module


def _sources() -> Iterator[Source]:
    for base, top in ((RUNTIME, "mcpbind"), (ROOT, "examples"), (ROOT, "bench")):
        for path in sorted((base / top).rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            module = ".".join(parts)
            package = module if is_package else ".".join(parts[:-1])
            yield Source(module, package, path, ast.parse(path.read_text(encoding="utf-8"), str(path)))


SOURCES = list(_sources())
MODULES = {source.module for source in SOURCES}


def _absolute(source: Source, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    package = source.package.split(".")
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _private_module_problem(source: Source, module: str) -> str | None:
    """Why importing ``module`` from ``source`` crosses a boundary, if it does: a private
    module (any private part of its dotted name) is for its own package only."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if _private(part):
            owner = ".".join(parts[:i])
            if not (source.module == owner or source.module.startswith(owner + ".")):
                return f"imports private module {module} from outside package {owner}"
    return None


def _defined_private_names(tree: ast.Module) -> set[str]:
    """The private names a module defines: functions, classes, assigned names and attributes,
    parameters, ``__slots__`` entries and field names given as strings."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            names.add(node.value)
    return {name for name in names if _private(name)}


def violations(source: Source) -> list[str]:
    found: list[str] = []

    def report(node: ast.AST, message: str) -> None:
        found.append(f"{source.path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}: {message}")

    ours = ("mcpbind", "examples", "bench")
    # Names bound to modules of ours, as imported here: alias -> dotted module name.
    module_aliases: dict[str, str] = {}
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in ours:
                    continue
                problem = _private_module_problem(source, alias.name)
                if problem:
                    report(node, problem)
                if alias.asname:
                    module_aliases[alias.asname] = alias.name
                else:
                    module_aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(source, node)
            if module.split(".")[0] not in ours:
                continue
            problem = _private_module_problem(source, module)
            if problem:
                report(node, problem)
            for alias in node.names:
                full = f"{module}.{alias.name}"
                if full in MODULES:  # a submodule
                    problem = _private_module_problem(source, full)
                    if problem:
                        report(node, problem)
                    module_aliases[alias.asname or alias.name] = full
                elif _private(alias.name) and module != source.module:
                    report(node, f"imports private name {alias.name} from {module}")

    defined = _defined_private_names(source.tree)
    for node in ast.walk(source.tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id in module_aliases:
            report(node, f"uses private name {node.attr} of module {module_aliases[value.id]}")
        elif isinstance(value, ast.Name) and value.id in ("self", "cls"):
            continue
        elif node.attr not in defined and (source.module, node.attr) not in FOREIGN_PRIVATE_ALLOWED:
            report(node, f"uses private attribute {ast.unparse(node)} not defined in {source.module}")
    return found


@pytest.mark.parametrize("source", SOURCES, ids=[source.module for source in SOURCES])
def test_no_module_reaches_into_another_modules_private_names(source: Source) -> None:
    assert violations(source) == []


def test_the_allowed_foreign_private_names_are_still_used() -> None:
    """Each allowance is for a use that exists (else it would hide a new one)."""
    used = set()
    for source in SOURCES:
        for node in ast.walk(source.tree):
            if isinstance(node, ast.Attribute) and (source.module, node.attr) in FOREIGN_PRIVATE_ALLOWED:
                used.add((source.module, node.attr))
    assert used == FOREIGN_PRIVATE_ALLOWED


def _check(module: str, code: str, *, package: str | None = None) -> list[str]:
    if package is None:
        package = module.rpartition(".")[0]
    return violations(Source(module, package, ROOT / "runtime" / "x.py", ast.parse(code)))


@pytest.mark.parametrize(
    ("module", "code", "expected"),
    [
        # What issue 13 found: the client calling the session's private send, the HTTP client
        # importing the session's private helper.
        (
            "mcpbind.client.client",
            "async def f(session):\n    await session._send(b'')\n",
            "private attribute session._send",
        ),
        (
            "mcpbind.transports.http.client",
            "from mcpbind.runtime.session import _only_error\n",
            "private name _only_error",
        ),
        ("mcpbind.transports.http.client", "from ..session import _only_error\n", "private name _only_error"),
        (
            "mcpbind.client.client",
            "from mcpbind.transports import stdio\nstdio._watcher\n",
            "private name _watcher of module",
        ),
        (
            "mcpbind.client.client",
            "import mcpbind.transports.stdio as s\ns._watcher\n",
            "private name _watcher of module",
        ),
        (
            "mcpbind.client.client",
            "from mcpbind.transports.http._asgi import lifespan\n",
            "private module mcpbind.transports.http._asgi",
        ),
        (
            "mcpbind.client.client",
            "from mcpbind.transports.http import _asgi\n",
            "private module mcpbind.transports.http._asgi",
        ),
        (
            "mcpbind.client.client",
            "import mcpbind.transports.http._common\n",
            "private module mcpbind.transports.http._common",
        ),
        (
            "examples.demo",
            "from mcpbind.transports.http._asgi import lifespan\n",
            "private module mcpbind.transports.http._asgi",
        ),
    ],
)
def test_the_check_catches_reaching_in(module: str, code: str, expected: str) -> None:
    found = _check(module, code)
    assert len(found) == 1 and expected in found[0], found


@pytest.mark.parametrize(
    ("module", "code"),
    [
        ("mcpbind.transports.http.server", "from mcpbind.transports.http._asgi import lifespan\n"),
        (
            "mcpbind.transports.http.server",
            "from mcpbind.transports.http import _asgi\n_asgi.lifespan\n",
        ),
        ("mcpbind.transports.http.server", "from ._common import Received\n"),
        ("mcpbind.runtime.session", "class S:\n    def _x(self): ...\ndef f(s):\n    s._x()\n"),
        ("mcpbind.runtime.session", "class S:\n    def f(self, o):\n        o._y = 1\n        return o._y\n"),
        ("mcpbind.client.client", "from mcpbind.runtime.session import only_error\nx.__class__\n"),
        ("bench.stdio", "from bench._proc import med\nfrom bench import _proc\n"),
    ],
)
def test_the_check_allows_same_module_and_same_package(module: str, code: str) -> None:
    assert _check(module, code) == []


def _import_linter_contracts() -> list[dict[str, object]]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # tomllib is new in 3.11
        tomllib = pytest.importorskip("tomli")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, object]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def _layer_modules() -> list[str]:
    """The modules named by the layers contract (each stands for itself and what is inside it)."""
    (layers,) = [contract for contract in _import_linter_contracts() if contract["type"] == "layers"]
    names: list[str] = []
    assert isinstance(layers["layers"], list)
    for layer in layers["layers"]:
        for name in layer.replace("|", ":").split(":"):
            names.append(name.strip().strip("()"))
    return names


def test_every_module_is_in_one_layer_of_the_import_linter_contract() -> None:
    """Each module of the runtime and of the generated code (not counting the root package, its
    ``__main__`` and the docstring-only ``__init__`` of a package split across layers) is in
    exactly one layer of the layers contract, so import-linter checks what it imports."""
    layers = _layer_modules()
    modules = {source.module for source in SOURCES if source.module.split(".")[0] == "mcpbind"}
    modules |= {
        ".".join(path.relative_to(ROOT / "generated").with_suffix("").parts).removesuffix(".__init__")
        for path in (ROOT / "generated" / "mcpbind").rglob("*.py")
    }
    outside: list[str] = []
    for module in sorted(modules - {"mcpbind", "mcpbind.__main__"}):
        homes = [layer for layer in layers if module == layer or module.startswith(layer + ".")]
        split_package = not homes and any(layer.startswith(module + ".") for layer in layers)
        if split_package and not _imports_anything(module):
            continue
        if len(homes) != 1:
            outside.append(f"{module}: in layers {homes}")
    assert outside == []
    contract_types = {contract["type"] for contract in _import_linter_contracts()}
    assert {"layers", "acyclic_siblings", "private_modules"} <= contract_types


def _imports_anything(module: str) -> bool:
    (source,) = [source for source in SOURCES if source.module == module]
    return any(isinstance(node, (ast.Import, ast.ImportFrom)) for node in ast.walk(source.tree))

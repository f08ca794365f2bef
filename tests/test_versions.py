"""Only ``mcpbind.versions`` names protocol versions: every other runtime module works on the
version its connection or request negotiated (issue 13). No runtime module but ``versions``
(which loads a negotiated version's package) and ``types`` (the handler-facing version's
types) imports the generated ``mcpbind.schema`` packages: the others take ``mcpbind.types`` or
ask ``mcpbind.versions``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from mcpbind import versions
from mcpbind.protocol import connection
from mcpbind.schema import VERSIONS

RUNTIME = Path(__file__).resolve().parent.parent / "runtime" / "mcpbind"
# A protocol version is a date: 2025-11-25.
VERSION_LIKE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def version_constants(source: str) -> list[tuple[int, str]]:
    """The string constants of ``source`` that contain a version date, with their lines;
    strings that stand alone as statements (docstrings, attribute documentation) may mention
    versions and are left out."""
    tree = ast.parse(source)
    prose = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in prose
        and VERSION_LIKE.search(node.value)
    ]


def test_the_check_sees_a_version_in_code_and_not_in_prose() -> None:
    source = '"""Since 2025-06-18."""\nX = "2025-03-26"\ndef f() -> str:\n    """Up to 2024-11-05."""\n    return f"v{X}-2025-11-25"\n'
    assert version_constants(source) == [(2, "2025-03-26"), (5, "-2025-11-25")]


def test_no_runtime_module_but_versions_names_a_version() -> None:
    modules = sorted(RUNTIME.rglob("*.py"))
    assert (
        RUNTIME / "versions.py" in modules
        and RUNTIME / "transports" / "http" / "server" / "app.py" in modules
    )
    found = {
        str(path.relative_to(RUNTIME)): hits
        for path in modules
        if path != RUNTIME / "versions.py"
        for hits in [version_constants(path.read_text(encoding="utf-8"))]
        if hits
    }
    assert found == {}


def schema_imports(source: str, package: str = "mcpbind") -> list[tuple[int, str]]:
    """The modules of ``mcpbind.schema`` (the package or below it) that ``source`` imports,
    with their lines, wherever the import stands (also under ``if TYPE_CHECKING:`` or in a
    function): ``from mcpbind.schema import v2025_11_25`` counts as ``mcpbind.schema.v2025_11_25``,
    ``from mcpbind.schema import load`` as ``mcpbind.schema``. Relative imports are resolved
    from ``package``, the package ``source`` is in."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if _in_schema(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                # A name imported from a package may be one of its modules.
                name = f"{module}.{alias.name}"
                if _in_schema(name) and (not _in_schema(module) or VERSION_PACKAGE.fullmatch(alias.name)):
                    found.append((node.lineno, name))
                elif _in_schema(module):
                    found.append((node.lineno, module))
    return found


def _package(path: Path) -> str:
    """The dotted package that the runtime module at ``path`` is in."""
    parts = path.relative_to(RUNTIME.parent).parts
    return ".".join(parts[:-1])


# A generated version's package: v2025_11_25.
VERSION_PACKAGE = re.compile(r"v\d{4}_\d{2}_\d{2}")


def _in_schema(module: str) -> bool:
    return module == "mcpbind.schema" or module.startswith("mcpbind.schema.")


def _versioned(module: str) -> bool:
    return any(VERSION_PACKAGE.fullmatch(part) for part in module.split("."))


def test_the_import_check_sees_every_form_of_import() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from mcpbind.schema import v2025_11_25 as types\n"
        "import mcpbind.schema.v2025_06_18.methods\n"
        "from mcpbind.schema.v2024_11_05 import Tool\n"
        "from mcpbind import schema, types as t\n"
        "if TYPE_CHECKING:\n"
        "    from mcpbind.schema import VERSIONS\n"
        "def f() -> None:\n"
        "    from mcpbind.schema.v2025_03_26.structs import Tool\n"
        "from mcpbind.schemas import x\n"
        "from ..schema import v2025_06_18\n"
        "from . import versions\n"
    )
    assert sorted(schema_imports(source, "mcpbind.server")) == [
        (2, "mcpbind.schema.v2025_11_25"),
        (3, "mcpbind.schema.v2025_06_18.methods"),
        (4, "mcpbind.schema.v2024_11_05"),
        (5, "mcpbind.schema"),
        (7, "mcpbind.schema"),
        (9, "mcpbind.schema.v2025_03_26.structs"),
        (11, "mcpbind.schema.v2025_06_18"),
    ]
    assert sorted(module for _, module in schema_imports(source, "mcpbind.server") if _versioned(module)) == [
        "mcpbind.schema.v2024_11_05",
        "mcpbind.schema.v2025_03_26.structs",
        "mcpbind.schema.v2025_06_18",
        "mcpbind.schema.v2025_06_18.methods",
        "mcpbind.schema.v2025_11_25",
    ]


def test_no_runtime_module_but_versions_and_types_imports_a_schema_package() -> None:
    allowed = {RUNTIME / "versions.py", RUNTIME / "types.py"}
    found = {
        str(path.relative_to(RUNTIME)): hits
        for path in sorted(RUNTIME.rglob("*.py"))
        if path not in allowed
        for hits in [schema_imports(path.read_text(encoding="utf-8"), _package(path))]
        if hits
    }
    assert found == {}


def test_types_is_the_package_of_the_handler_version() -> None:
    imported = {module for _, module in schema_imports((RUNTIME / "types.py").read_text(encoding="utf-8"))}
    assert imported == {"mcpbind.schema.v" + versions.HANDLER_VERSION.replace("-", "_")}


def test_the_versions_are_known_and_the_handler_version_is_supported() -> None:
    assert set(versions.SUPPORTED_VERSIONS) <= set(VERSIONS)
    assert list(versions.SUPPORTED_VERSIONS) == sorted(versions.SUPPORTED_VERSIONS, reverse=True)
    assert versions.HANDLER_VERSION == versions.HANDSHAKE_VERSIONS[0]
    assert versions.LATEST_VERSION == versions.SUPPORTED_VERSIONS[0] == "2026-07-28"
    assert versions.MODERN_VERSIONS < set(versions.SUPPORTED_VERSIONS)
    assert set(versions.HANDSHAKE_VERSIONS) == set(versions.SUPPORTED_VERSIONS) - versions.MODERN_VERSIONS
    assert versions.TOOL_INPUT_ERRORS_AS_PROTOCOL_ERRORS < set(versions.SUPPORTED_VERSIONS)
    assert versions.STREAMABLE_HTTP_ASSUMED_VERSION in versions.SUPPORTED_VERSIONS
    # Still importable where it was.
    assert connection.SUPPORTED_VERSIONS is versions.SUPPORTED_VERSIONS
    assert connection.CANONICAL_VERSION == versions.HANDLER_VERSION

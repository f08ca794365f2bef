"""Only ``mcpbind.versions`` names protocol versions: every other runtime module works on the
version its connection or request negotiated (issue 13)."""

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


def test_the_versions_are_known_and_the_handler_version_is_supported() -> None:
    assert set(versions.SUPPORTED_VERSIONS) <= set(VERSIONS)
    assert list(versions.SUPPORTED_VERSIONS) == sorted(versions.SUPPORTED_VERSIONS, reverse=True)
    assert versions.HANDLER_VERSION == versions.SUPPORTED_VERSIONS[0]
    assert versions.TOOL_INPUT_ERRORS_AS_PROTOCOL_ERRORS < set(versions.SUPPORTED_VERSIONS)
    assert versions.STREAMABLE_HTTP_ASSUMED_VERSION in versions.SUPPORTED_VERSIONS
    # Still importable where it was.
    assert connection.SUPPORTED_VERSIONS is versions.SUPPORTED_VERSIONS
    assert connection.CANONICAL_VERSION == versions.HANDLER_VERSION

"""The client side stands on its own (issue 13): nothing of the client endpoint
(``mcpbind.client``) or of the HTTP client transports (``mcpbind.transports.http.client``)
imports the server layer, and the client reaches the session driver through its public names
only.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import child_env

RUNTIME = Path(__file__).resolve().parents[2] / "runtime" / "mcpbind"
CLIENT_PACKAGES = (RUNTIME / "client", RUNTIME / "transports" / "http" / "client")
CLIENT_SOURCES = sorted(path for folder in CLIENT_PACKAGES for path in folder.rglob("*.py"))

# What serves: the server endpoint, and the server side of the HTTP transports.
SERVER_SIDE = (
    "mcpbind.server",
    "mcpbind.transports.http.server",
    "mcpbind.transports.http.legacy",
    "mcpbind.transports.http._asgi",
    "mcpbind.transports.http._embedded",
    "mcpbind.transports.http.events",
    "mcpbind.transports.http.sse",
)


def _is_server_side(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in SERVER_SIDE)


def _imported(tree: ast.Module) -> set[str]:
    """Every absolute module an import statement names, at any depth (function-level too)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_the_client_sources_are_found() -> None:
    names = {path.name for path in CLIENT_SOURCES}
    assert {"client.py", "remote.py", "streamable.py", "legacy.py"} <= names


@pytest.mark.parametrize("path", CLIENT_SOURCES, ids=lambda path: str(path.relative_to(RUNTIME)))
def test_no_client_module_imports_the_server_side(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    assert not any(node.level for node in ast.walk(tree) if isinstance(node, ast.ImportFrom))
    assert sorted(name for name in _imported(tree) if _is_server_side(name)) == []


def test_connecting_loads_nothing_of_the_server_side() -> None:
    """What a client imports, lazily imported transports included, at run time."""
    code = (
        "import sys\n"
        "import mcpbind.client.client, mcpbind.transports.http.client, mcpbind.transports.stdio\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('mcpbind'))))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=child_env(), timeout=60
    ).stdout.split()
    assert "mcpbind.client.remote" in loaded
    assert [name for name in loaded if _is_server_side(name)] == []


def test_the_client_uses_only_public_names_of_the_session() -> None:
    """No ``session._x`` (nor ``self.session._x``) in the client: the driver's private names
    are its own."""
    uses = []
    for path in CLIENT_SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and "session" in ast.unparse(node.value).lower()
            ):
                uses.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert uses == []

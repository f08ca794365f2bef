"""Every public name of mcpbind.client.auth says what it is for."""

from __future__ import annotations

import inspect

import pytest

import mcpbind.client.auth as auth


@pytest.mark.parametrize(
    "name",
    [
        name
        for name in auth.__all__
        if inspect.isclass(getattr(auth, name)) or inspect.isfunction(getattr(auth, name))
    ],
)
def test_every_public_name_has_a_docstring(name: str) -> None:
    assert inspect.getdoc(getattr(auth, name)), name


@pytest.mark.parametrize(
    "method", ["get_tokens", "set_tokens", "forget_tokens", "get_client", "set_client", "forget_client"]
)
def test_the_store_protocol_documents_its_methods(method: str) -> None:
    assert inspect.getdoc(getattr(auth.TokenStore, method)), method


def test_importing_it_loads_no_jose_or_oauth_library() -> None:
    import subprocess
    import sys

    code = "import sys, mcpbind.client.auth; print([m for m in sys.modules if m.startswith(('authlib', 'joserfc'))])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

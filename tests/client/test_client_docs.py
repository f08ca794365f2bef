"""The client's API says what it does where a user looks: ``help()`` and the IDE's hover text."""

from __future__ import annotations

import inspect

import pytest

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer

PUBLIC = sorted(name for name in vars(RemoteServer) if not name.startswith("_"))


@pytest.mark.parametrize("name", PUBLIC)
def test_every_method_of_a_remote_server_has_a_docstring(name: str) -> None:
    member = inspect.getattr_static(RemoteServer, name)
    target = member.fget if isinstance(member, property) else member
    assert inspect.getdoc(target), f"RemoteServer.{name} has no docstring"


def test_call_tool_documents_its_arguments_and_failures() -> None:
    doc = inspect.getdoc(RemoteServer.call_tool) or ""
    for word in ("arguments", "is_error", "McpError", "progress", "timeout"):
        assert word in doc, word


def test_the_client_docstring_tells_its_version_from_the_protocol_version() -> None:
    doc = " ".join((inspect.getdoc(Client) or "").split())
    assert "``version`` is the client's version, not the protocol's" in doc
    assert "``protocol_version`` pins a version" in doc
    assert "``version`` is the protocol version" not in doc

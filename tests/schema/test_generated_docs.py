"""What the generated modules say about themselves: docstrings fit for Python tools (no TSDoc
``{@link}``, no links relative to the specification's site, aliases documented) and an
``__all__`` that static tools can read (a literal list)."""

from __future__ import annotations

import ast
import itertools

import msgspec
import pytest

import mcpbind.protocol.unions
from codegen.emit import spec_text
from codegen.pins import PROJECT, load_pins
from mcpbind.schema import VERSIONS, load

FOLDERS = {pin.version: PROJECT / "generated" / "mcpbind" / "schema" / pin.module for pin in load_pins()}
NAMES = frozenset({"CallToolRequest", "CallToolRequestParams", "ClientCapabilities", "MetaObject", "Tool"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("except for {@link Tool},", "except for ``Tool``,"),
        ("for a {@link CallToolRequesttools/call} request", "for a ``tools/call`` request"),
        ("for a {@link CallToolRequest | tools/call} request", "for a ``tools/call`` request"),
        ("but {@link ClientCapabilities.sampling.tools} is", "but ``ClientCapabilities.sampling.tools`` is"),
        (
            "Keys MUST follow the {@link MetaObject`_meta` key naming rules}, with",
            "Keys MUST follow the `_meta` key naming rules (``MetaObject``), with",
        ),
        ("see {@link Unknown the unknown thing}.", "see the unknown thing (``Unknown``)."),
        ("see {@link Unknown}.", "see ``Unknown``."),
        (
            "See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes",
            "See [General fields: `_meta`](https://modelcontextprotocol.io/specification/2025-06-18/basic#meta)"
            " for notes",
        ),
        (
            "[Lifecycle](/specification/2025-11-25/basic/lifecycle)",
            "[Lifecycle](https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle)",
        ),
        ("[RFC](https://example.com/x) stays", "[RFC](https://example.com/x) stays"),
    ],
)
def test_schema_prose_becomes_python_docstring_prose(text: str, expected: str) -> None:
    assert spec_text(text, NAMES) == expected


@pytest.mark.parametrize("version", VERSIONS)
def test_no_tsdoc_links_or_relative_links_are_left(version: str) -> None:
    text = (FOLDERS[version] / "structs.py").read_text()
    assert "{@link" not in text
    assert "](/" not in text


def _docstring_after(tree: ast.Module, name: str) -> str | None:
    """The string literal right after the annotated assignment of ``name``, at any depth."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for statement, following in itertools.pairwise(body):
            if (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and statement.target.id == name
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                return following.value.value
    return None


def test_type_aliases_carry_their_description_as_a_docstring() -> None:
    tree = ast.parse((FOLDERS["2025-06-18"] / "structs.py").read_text())
    assert (_docstring_after(tree, "LoggingLevel") or "").startswith("The severity of a log message.")
    assert _docstring_after(tree, "RequestId") == "A uniquely identifying ID for a request in JSON-RPC."
    # an alias that differs at run time is documented where the type checker reads it
    message = _docstring_after(tree, "JSONRPCMessage") or ""
    assert message.startswith("Refers to any valid JSON-RPC object")


@pytest.mark.parametrize("version", VERSIONS)
def test_all_is_a_literal_list_of_what_the_package_holds(version: str) -> None:
    tree = ast.parse((FOLDERS[version] / "__init__.py").read_text())
    [value] = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["__all__"]
    ]
    assert isinstance(value, ast.List)
    assert all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts)
    listed = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    package = load(version)
    assert listed == list(package.__all__)
    assert set(listed) == {*package.structs.__all__, "methods", "stubs"}
    assert all(hasattr(package, name) for name in listed)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_package_docstring_says_how_to_decode(version: str) -> None:
    package = load(version)
    doc = " ".join((package.__doc__ or "").split())
    first, _, rest = doc.partition(". ")
    assert first == f"MCP {version}: the generated structs (re-exported here), ``methods`` and ``stubs``"
    assert rest.startswith(
        "Decode these types with ``mcpbind.protocol.unions.decode(data, Type)`` (or pass "
        "``dec_hook=mcpbind.protocol.unions.dec_hook`` to msgspec): plain ``msgspec.json.decode(data, type=Type)`` "
        "fails on the schema's untagged unions, such as the ``resource`` of ``EmbeddedResource``."
    )
    # What it says holds for this version.
    data = b'{"type": "resource", "resource": {"uri": "notes://a", "text": "x"}}'
    embedded = package.EmbeddedResource
    assert mcpbind.protocol.unions.decode(data, embedded).resource.text == "x"
    assert (
        msgspec.json.decode(data, type=embedded, dec_hook=mcpbind.protocol.unions.dec_hook).resource.text
        == "x"
    )
    with pytest.raises(msgspec.ValidationError, match=r"untagged union"):
        msgspec.json.decode(data, type=embedded)

"""The generator: pins are enforced, errata apply or fail loudly, output is stable and complete."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codegen.__main__ import render
from codegen.model import build_model, snake
from codegen.pins import (
    PROJECT,
    Pin,
    PinError,
    apply_errata,
    load_pins,
    load_schema,
    local_schema,
    read_schema_bytes,
)
from mcpbind.protocol.methods import Direction
from mcpbind.schema import LATEST, VERSIONS, load

PINS = load_pins()
HAVE_SCHEMAS = all(local_schema(p) is not None for p in PINS)
needs_schemas = pytest.mark.skipif(
    not HAVE_SCHEMAS, reason="no schema files (../shared/schema or $MCPBIND_SCHEMA_DIR)"
)


def _pin(version: str) -> Pin:
    return next(p for p in PINS if p.version == version)


def test_the_generated_versions_are_the_pinned_ones() -> None:
    versions = [p.version for p in PINS]
    assert versions == sorted(set(versions)) and versions
    assert VERSIONS == tuple(versions)
    assert LATEST == versions[-1]
    for pin in PINS:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", pin.version)
        assert pin.url.endswith(f"/{pin.commit}/schema/{pin.version}/schema.json")
        assert re.fullmatch(r"[0-9a-f]{64}", pin.sha256)
        assert pin.errata is None or pin.errata.is_file()


@needs_schemas
def test_generated_tree_is_up_to_date() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "codegen", "--check"], cwd=PROJECT, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr


@needs_schemas
def test_render_is_deterministic() -> None:
    assert render(None) == render(None)


@needs_schemas
def test_check_reports_drift(tmp_path: Path) -> None:
    out = tmp_path / "generated"
    run = [sys.executable, "-m", "codegen", "--out", str(out)]
    assert subprocess.run(run, cwd=PROJECT, capture_output=True, check=False).returncode == 0
    target = out / "mcpbind" / "schema" / "v2025_06_18" / "structs.py"
    target.write_text(target.read_text() + "\n# edited by hand\n")
    (out / "mcpbind" / "schema" / "leftover.py").write_text("")
    check = subprocess.run([*run, "--check"], cwd=PROJECT, capture_output=True, text=True, check=False)
    assert check.returncode == 1
    assert "v2025_06_18/structs.py" in check.stdout
    assert "leftover.py" in check.stdout


@needs_schemas
def test_a_schema_that_does_not_match_its_pin_is_refused(tmp_path: Path) -> None:
    pin = _pin("2025-06-18")
    data = read_schema_bytes(pin)
    assert hashlib.sha256(data).hexdigest() == pin.sha256
    forged = tmp_path / pin.version / "schema.json"
    forged.parent.mkdir()
    forged.write_bytes(data.replace(b'"tools/call"', b'"tools/kall"'))
    with pytest.raises(PinError, match="does not match the pin"):
        read_schema_bytes(pin, tmp_path)


@needs_schemas
def test_an_erratum_that_no_longer_applies_fails_loudly(tmp_path: Path) -> None:
    pin = _pin("2025-06-18")
    schema: dict[str, Any] = json.loads(read_schema_bytes(pin))
    schema["definitions"]["JSONRPCError"]["properties"]["id"] = {"type": "string"}  # "fixed" upstream
    with pytest.raises(PinError, match="no longer applies"):
        apply_errata(pin, schema)
    bad = tmp_path / "errata.json"
    bad.write_text(
        json.dumps({"errata": [{"why": "x", "patch": [{"op": "remove", "path": "/definitions/Role"}]}]})
    )
    with pytest.raises(PinError, match="must start by testing"):
        apply_errata(Pin(**{**pin.__dict__, "errata": bad}), json.loads(read_schema_bytes(pin)))


@needs_schemas
@pytest.mark.parametrize("version", [p.version for p in PINS])
def test_every_definition_is_generated(version: str) -> None:
    schema = load_schema(_pin(version))
    module = load(version)
    definitions = schema.get("definitions") or schema["$defs"]
    missing = [name for name in definitions if not hasattr(module, name)]
    assert not missing
    model = build_model(version, schema)
    for name, struct in model.structs.items():
        cls = getattr(module, name)
        wire = {f.wire for f in struct.fields} | ({struct.tag_field} if struct.tag_field else set())
        encoded = set(cls.__struct_encode_fields__) | ({cls.__struct_config__.tag_field} - {None})
        assert encoded == wire, name


@pytest.mark.parametrize("version", VERSIONS)
def test_generated_files_carry_the_header(version: str) -> None:
    pin = _pin(version)
    folder = PROJECT / "generated" / "mcpbind" / "schema" / pin.module
    files = sorted(folder.glob("*.py"))
    assert {f.name for f in files} == {"__init__.py", "structs.py", "methods.py", "stubs.py"}
    for path in files:
        head = path.read_text().split("\n\n", 1)[0]
        assert "DO NOT EDIT" in head
        assert pin.version in head and pin.commit in head and pin.sha256 in head
        assert "mcpbind-codegen" in head


def test_method_table_2025_06_18() -> None:
    methods = load("2025-06-18").methods
    assert len(methods.REQUESTS) == 16
    assert len(methods.NOTIFICATIONS) == 9
    assert methods.REQUESTS["ping"].direction is Direction.BOTH
    assert methods.REQUESTS["tools/call"].direction is Direction.CLIENT_TO_SERVER
    assert methods.REQUESTS["elicitation/create"].direction is Direction.SERVER_TO_CLIENT
    assert methods.NOTIFICATIONS["notifications/cancelled"].direction is Direction.BOTH
    assert methods.NOTIFICATIONS["notifications/roots/list_changed"].direction is Direction.CLIENT_TO_SERVER
    structs = load("2025-06-18")
    call = methods.REQUESTS["tools/call"]
    assert (call.params_type, call.result_type, call.params_optional) == (
        structs.CallToolRequestParams,
        structs.CallToolResult,
        False,
    )
    assert methods.REQUESTS["ping"].result_type is structs.EmptyResult
    assert methods.REQUESTS["tools/list"].params_optional
    assert methods.BATCHING is False
    assert load("2025-03-26").methods.BATCHING is True


def test_method_table_2026_07_28() -> None:
    module = load("2026-07-28")
    methods = module.methods
    assert "initialize" not in methods.REQUESTS
    assert methods.REQUESTS["server/discover"].direction is Direction.CLIENT_TO_SERVER
    for name in ("sampling/createMessage", "roots/list", "elicitation/create"):
        assert methods.REQUESTS[name].embedded
        assert methods.REQUESTS[name].direction is Direction.SERVER_TO_CLIENT
    assert not methods.REQUESTS["tools/call"].embedded
    assert methods.NOTIFICATIONS["notifications/cancelled"].direction is Direction.BOTH


@pytest.mark.parametrize(
    ("wire", "attr"),
    [
        ("mimeType", "mime_type"),
        ("_meta", "meta"),
        ("$schema", "schema"),
        ("io.modelcontextprotocol/clientCapabilities", "client_capabilities"),
        ("ttlMs", "ttl_ms"),
        ("URLElicitation", "url_elicitation"),
        ("from", "from_"),
        ("float", "float_"),
    ],
)
def test_attribute_names(wire: str, attr: str) -> None:
    assert snake(wire) == attr

"""``python -m codegen`` as a user runs it: messages on stderr and exit statuses.

0 done, 1 ``--check`` found drift, 2 bad usage or input, always as one message (no traceback).
Each test pins synthetic versions in a temporary pins file (``--pins``) over schema files in a
temporary folder (``--schema-dir``), and generates into a temporary ``--out``.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codegen.pins import PROJECT, load_pins, local_schema

PINS = load_pins()
UNREACHABLE = "http://127.0.0.1:9/schema.json"  # the discard port: nothing listens there


def raw_schema(version: str) -> dict[str, Any]:
    pin = next(p for p in PINS if p.version == version)
    path = local_schema(pin)
    if path is None:
        pytest.skip(f"schema {version} is not on disk (set MCPBIND_SCHEMA_DIR)")
    schema: dict[str, Any] = json.loads(path.read_bytes())
    return schema


def codegen(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen", *map(str, args)],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def pin_versions(
    root: Path,
    schemas: dict[str, dict[str, Any] | bytes | None],
    errata: dict[str, list[dict[str, Any]]] | None = None,
    url: str = UNREACHABLE,
) -> Path:
    """A pins file (``root/schema/pins.json``) for ``schemas``; each lands in ``root/schemas/<version>/``.

    ``None`` pins made-up bytes and writes no file (a missing schema).
    """
    versions: dict[str, Any] = {}
    for version, schema in schemas.items():
        data = schema if isinstance(schema, bytes) else json.dumps(schema, indent=2).encode()
        if schema is not None:
            target = root / "schemas" / version / "schema.json"
            target.parent.mkdir(parents=True)
            target.write_bytes(data)
        entry: dict[str, Any] = {
            "path": f"schema/{version}/schema.json",
            "url": url,
            "sha256": hashlib.sha256(data if schema is not None else b"absent").hexdigest(),
        }
        if errata and version in errata:
            entry["errata"] = f"errata/{version}.json"
            path = root / "schema" / "errata" / f"{version}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"errata": errata[version]}))
        versions[version] = entry
    pins = root / "schema" / "pins.json"
    pins.parent.mkdir(parents=True, exist_ok=True)
    pins.write_text(
        json.dumps(
            {"snapshot_commit": "0" * 40, "repository": "example/schemas", "versions": versions}, indent=2
        )
    )
    return pins


def regen(root: Path, pins: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return codegen("--pins", pins, "--schema-dir", root / "schemas", "--out", root / "generated", *more)


def assert_one_message(run: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """Exit 2 with a single ``codegen: error:`` message holding ``fragments``, and no traceback."""
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("codegen: error:")]
    assert len(errors) == 1, run.stderr
    for fragment in fragments:
        assert fragment in run.stderr, (fragment, run.stderr)
    return run.stderr


# -- item 14: unsupported shapes, missing schemas -------------------------------------------------


def test_unsupported_shapes_are_one_message_naming_each_place(tmp_path: Path) -> None:
    schema = raw_schema("2025-06-18")
    tool = schema["definitions"]["Tool"]["properties"]
    tool["tags"] = {"type": "array", "prefixItems": [{"type": "string"}], "items": False}
    tool["region"] = {"type": "string", "not": {"const": "moon"}}
    schema["definitions"]["Role"]["enum"] = [["user"], "assistant"]
    run = regen(tmp_path, pin_versions(tmp_path, {"2099-01-01": schema}))
    stderr = assert_one_message(
        run,
        "schema 2099-01-01: unsupported schema shapes:",
        "`prefixItems` at #/definitions/Tool/properties/tags/prefixItems: a tuple (a type per position) has no binding",
        "`items: false` at #/definitions/Tool/properties/tags/items: a list that may hold nothing has no binding",
        "`not` at #/definitions/Tool/properties/region/not: a negated schema has no binding",
        "`enum` at #/definitions/Role/enum: only a list of strings, numbers, booleans or null has a binding",
    )
    assert len(stderr.splitlines()) == 5  # the message and its four places
    assert not (tmp_path / "generated").exists()


@pytest.mark.parametrize(
    "case",
    ["missing and unreachable", "wrong sha256", "not JSON", "stale erratum", "bad erratum", "no pins file"],
)
def test_bad_input_is_one_message_and_exit_2(tmp_path: Path, case: str) -> None:
    version = "2099-01-01"
    good = raw_schema("2025-06-18")
    if case == "missing and unreachable":
        pins = pin_versions(tmp_path, {version: None})
        expected: tuple[str, ...] = (
            f"schema {version} not found (looked in {tmp_path / 'schemas' / version / 'schema.json'}",
            f"the pinned URL {UNREACHABLE} could not be downloaded",
            "pass --schema-dir DIR",
        )
    elif case == "wrong sha256":
        pins = pin_versions(tmp_path, {version: good})
        (tmp_path / "schemas" / version / "schema.json").write_text("{}")
        expected = ("does not match the pin", version)
    elif case == "not JSON":
        pins = pin_versions(tmp_path, {version: b"<html>rate limited</html>"})
        expected = (f"schema {version} is not valid JSON",)
    elif case == "stale erratum":
        erratum = {
            "why": "the id was not nullable",
            "patch": [
                {
                    "op": "test",
                    "path": "/definitions/JSONRPCError/properties/id",
                    "value": {"type": "string"},
                },
                {
                    "op": "replace",
                    "path": "/definitions/JSONRPCError/properties/id",
                    "value": {"type": "null"},
                },
            ],
        }
        pins = pin_versions(tmp_path, {version: good}, errata={version: [erratum]})
        expected = ("erratum no longer applies (the id was not nullable)",)
    elif case == "bad erratum":
        erratum = {"why": "x", "patch": [{"op": "remove", "path": "/definitions/Role"}]}
        pins = pin_versions(tmp_path, {version: good}, errata={version: [erratum]})
        expected = ("every erratum must start by testing the old value",)
    else:
        pins = tmp_path / "schema" / "pins.json"
        expected = (f"cannot read pins file {pins}",)
    assert_one_message(regen(tmp_path, pins), *expected)


def test_dropped_keywords_are_listed_with_their_places(tmp_path: Path) -> None:
    schema = raw_schema("2025-06-18")
    defs = schema["definitions"]
    defs["Tool"]["properties"]["name"]["x-display"] = "wide"
    defs["Tool"]["properties"]["name"]["pattern"] = "^[a-z]+$"  # knowingly ignored: not listed
    defs["Tool"]["properties"]["annotations"]["properties"] = {"colour": {"type": "string"}}
    defs["Tool"]["properties"]["limits"] = {"type": "object", "default": {"calls": 3}}
    run = regen(tmp_path, pin_versions(tmp_path, {"2099-01-01": schema}))
    assert run.returncode == 0, run.stderr
    assert sorted(run.stderr.splitlines()) == [
        "codegen: warning: schema 2099-01-01: `default` dropped at #/definitions/Tool/properties/limits/default: "
        "only a string, number, boolean or null default becomes a member's default",
        "codegen: warning: schema 2099-01-01: `properties` beside `$ref` dropped at "
        "#/definitions/Tool/properties/annotations/properties: only `$ref` is read",
        "codegen: warning: schema 2099-01-01: `x-display` dropped at #/definitions/Tool/properties/name/x-display: "
        "not a keyword this generator knows",
    ]
    assert (tmp_path / "generated" / "mcpbind" / "schema" / "v2099_01_01" / "structs.py").is_file()


def test_the_pinned_schemas_drop_no_unlisted_keyword(tmp_path: Path) -> None:
    schemas: dict[str, dict[str, Any] | bytes | None] = {p.version: raw_schema(p.version) for p in PINS}
    run = regen(tmp_path, pin_versions(tmp_path, schemas), "--check")
    assert run.returncode == 1  # nothing generated in tmp_path yet
    assert run.stderr == ""

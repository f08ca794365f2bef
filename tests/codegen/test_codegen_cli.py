"""``python -m codegen`` as a user runs it: messages on stderr and exit statuses.

0 done, 1 ``--check`` found drift, 2 bad usage or input, always as one message (no traceback).
Each test pins synthetic versions in a temporary pins file (``--pins``) over schema files in a
temporary folder (``--schema-dir``), and generates into a temporary ``--out``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from codegen.pins import PINS_FILE, PROJECT, load_pins, local_schema
from mcpbind.schema import load
from tests.codegen.test_codegen_coverage import Coverage

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


# -- item 15: add-version -------------------------------------------------------------------------

NEXT = "2026-10-01"
REMOVED = "BaseMetadata"  # a definition of 2026-07-28 that nothing refers to


def copy_of_schema_folder(root: Path) -> Path:
    """A copy of the project's schema/ (pins.json and errata/); returns the copied pins file."""
    shutil.copytree(PROJECT / "schema", root / "schema")
    return root / "schema" / "pins.json"


def import_file(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_add_version_then_regen(tmp_path: Path) -> None:
    pins_file = copy_of_schema_folder(tmp_path)
    before = json.loads(pins_file.read_text())
    project_pins = PINS_FILE.read_bytes()
    schema = raw_schema("2026-07-28")
    assert f'"#/$defs/{REMOVED}"' not in json.dumps(schema) and REMOVED in schema["$defs"]
    defs = schema["$defs"]
    defs["Tool"]["properties"]["pricing"] = {
        "type": "object",
        "properties": {"perCall": {"type": "number"}},
        "required": ["perCall"],
    }
    del defs[REMOVED]
    # Upstream fixed what one erratum of 2026-07-28 corrects: that one is not carried over.
    fixed = "/$defs/JSONRPCErrorResponse/properties/id"
    defs["JSONRPCErrorResponse"]["properties"]["id"] = {
        "anyOf": [{"$ref": "#/$defs/RequestId"}, {"type": "null"}]
    }
    path = tmp_path / "schemas" / NEXT / "schema.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(schema, indent=2))

    run = codegen("add-version", NEXT, path, "--pins", pins_file)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stderr == ""

    # The pin: sha256 of the file, the upstream path and URL, the errata file; the others unchanged.
    after = json.loads(pins_file.read_text())
    upstream = f"schema/{NEXT}/schema.json"
    assert after == {
        **before,
        "versions": {
            **before["versions"],
            NEXT: {
                "path": upstream,
                "url": f"https://raw.githubusercontent.com/{before['repository']}/{before['snapshot_commit']}/{upstream}",
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                "errata": f"errata/{NEXT}.json",
            },
        },
    }
    assert PINS_FILE.read_bytes() == project_pins  # the project's own pins are untouched
    assert [p.name for p in (tmp_path / "schema").rglob("schema.json")] == []  # no schema JSON copied in

    # The errata: the previous version's, less the one whose test no longer passes.
    previous = json.loads((tmp_path / "schema" / "errata" / "2026-07-28.json").read_text())["errata"]
    carried = json.loads((tmp_path / "schema" / "errata" / f"{NEXT}.json").read_text())["errata"]
    stale = [e for e in previous if e["patch"][0]["path"] == fixed]
    assert len(stale) == 1 and carried == [e for e in previous if e not in stale]

    # The summary, definition by definition.
    lines = run.stdout.splitlines()
    assert lines[0] == f"codegen: pinned {NEXT} in {pins_file} ({len(defs)} definitions)"
    assert f"since 2026-07-28: 0 definitions added, 1 removed, 2 changed, {len(defs) - 2} unchanged" in lines
    assert f"  removed  {REMOVED}" in lines
    assert "  changed  JSONRPCErrorResponse: properties ~id" in lines
    assert "  changed  Tool: properties +pricing" in lines
    assert (
        f"errata: {len(carried)} of {len(previous)} carried over from 2026-07-28 into schema/errata/{NEXT}.json"
        in lines
    )
    dropped = lines.index(f"  dropped: {stale[0]['why']}")
    assert f"the value at {fixed} is no longer the tested one" in lines[dropped + 1]
    assert lines[-1].endswith(f"regen finds the schema with --schema-dir {tmp_path / 'schemas'}")

    # regen generates the new version's package beside the others.
    out = tmp_path / "generated"
    regen_run = codegen("--pins", pins_file, "--schema-dir", tmp_path / "schemas", "--out", out)
    assert regen_run.returncode == 0, regen_run.stdout + regen_run.stderr
    package = out / "mcpbind" / "schema" / "v2026_10_01"
    assert sorted(p.name for p in package.glob("*.py")) == [
        "__init__.py",
        "methods.py",
        "structs.py",
        "stubs.py",
    ]
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json; from mcpbind.schema import VERSIONS, LATEST, load; m = load(LATEST); "
            "print(json.dumps([VERSIONS, LATEST, len(m.methods.REQUESTS), m.structs.__name__]))",
        ],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(PROJECT / "runtime"), str(out)])},
        capture_output=True,
        text=True,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr
    versions, latest, requests, _ = json.loads(probe.stdout)
    assert versions == [*before["versions"], NEXT] and latest == NEXT
    assert requests == len(load("2026-07-28").methods.REQUESTS)
    structs = import_file(package / "structs.py", "added_version_structs")
    assert Coverage(schema, structs).problems() == []
    assert not hasattr(structs, REMOVED)
    assert (
        structs.Tool(name="t", input_schema={}, pricing=structs.ToolPricing(per_call=0.5)).pricing.per_call
        == 0.5
    )


def test_add_version_moves_errata_to_the_new_dialect_and_needs_no_errata_file(tmp_path: Path) -> None:
    pins_file = copy_of_schema_folder(tmp_path)
    # 2025-06-18 as a 2020-12 schema ("$defs"): both of its errata still apply, at the new paths.
    text = json.dumps(raw_schema("2025-06-18")).replace('"#/definitions/', '"#/$defs/')
    schema = json.loads(text)
    schema["$defs"] = schema.pop("definitions")
    path = tmp_path / "incoming.json"
    path.write_text(json.dumps(schema))
    commit = "1" * 40
    run = codegen("add-version", "2025-07-01", path, "--pins", pins_file, "--commit", commit)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert "since 2025-06-18: 0 definitions added, 0 removed, 0 changed, " in run.stdout
    assert "  (the definitions moved from #/definitions to #/$defs)" in lines
    assert "errata: 2 of 2 carried over from 2025-06-18 into schema/errata/2025-07-01.json" in lines
    assert "regen looks for 2025-07-01/schema.json under --schema-dir" in lines[-1]
    carried = json.loads((tmp_path / "schema" / "errata" / "2025-07-01.json").read_text())["errata"]
    assert [op["path"].split("/")[1] for e in carried for op in e["patch"]] == ["$defs"] * 4
    entry = json.loads(pins_file.read_text())["versions"]["2025-07-01"]
    assert entry["commit"] == commit and f"/{commit}/schema/2025-07-01/schema.json" in entry["url"]

    # A version after one without errata starts without errata, and needs no errata file.
    pins = json.loads(pins_file.read_text())
    pins["versions"] = {
        "2024-11-05": {k: v for k, v in pins["versions"]["2024-11-05"].items() if k != "errata"}
    }
    pins_file.write_text(json.dumps(pins, indent=2))
    (tmp_path / "schema" / "errata" / "2024-11-05.json").unlink()
    older = tmp_path / "schemas" / "2024-12-01" / "schema.json"
    older.parent.mkdir(parents=True)
    older.write_text(json.dumps(raw_schema("2024-11-05")))
    run = codegen("add-version", "2024-12-01", older, "--pins", pins_file)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "errata: 2024-11-05 has none, so 2024-12-01 starts with none" in run.stdout.splitlines()
    assert "errata" not in json.loads(pins_file.read_text())["versions"]["2024-12-01"]
    assert not (tmp_path / "schema" / "errata" / "2024-12-01.json").exists()
    out = tmp_path / "generated"
    run = codegen("--pins", pins_file, "--schema-dir", tmp_path / "schemas", "--out", out)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "# errata: none\n" in (out / "mcpbind" / "schema" / "v2024_12_01" / "structs.py").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["next", "{schema}"], "version 'next' is not a date like 2026-10-01"),
        (["2026-07-28", "{schema}"], "2026-07-28 is already pinned in"),
        (["2026-10-01", "{missing}"], "cannot read {missing}: No such file or directory"),
        (["2026-10-01", "{not_json}"], "{not_json} is not valid JSON"),
        (["2026-10-01", "{schema}", "--commit", "main"], "--commit 'main' is not a full 40-digit"),
    ],
)
def test_add_version_refuses_bad_input_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    pins_file = copy_of_schema_folder(tmp_path)
    before = sorted((p.name, p.read_bytes()) for p in (tmp_path / "schema").rglob("*") if p.is_file())
    names = {
        "schema": tmp_path / "s.json",
        "missing": tmp_path / "nope.json",
        "not_json": tmp_path / "bad.json",
    }
    names["schema"].write_text(json.dumps(raw_schema("2026-07-28")))
    names["not_json"].write_text("<html>")
    run = codegen("add-version", *(a.format(**names) for a in args), "--pins", pins_file)
    assert_one_message(run, message.format(**names))
    assert sorted((p.name, p.read_bytes()) for p in (tmp_path / "schema").rglob("*") if p.is_file()) == before


def test_add_version_pins_a_schema_the_generator_cannot_build_yet_and_says_so(tmp_path: Path) -> None:
    pins_file = copy_of_schema_folder(tmp_path)
    schema = raw_schema("2026-07-28")
    schema["$defs"]["Tool"]["properties"]["tags"] = {"type": "array", "prefixItems": [{"type": "string"}]}
    path = tmp_path / "next.json"
    path.write_text(json.dumps(schema))
    run = codegen("add-version", NEXT, path, "--pins", pins_file)
    assert_one_message(
        run,
        f"schema {NEXT} is pinned, but the generator cannot build it: unsupported schema shapes:",
        "`prefixItems` at #/$defs/Tool/properties/tags/prefixItems",
        f"add an erratum to {tmp_path / 'schema' / 'errata' / NEXT}.json",
    )
    assert NEXT in json.loads(pins_file.read_text())["versions"]  # an erratum can now fix the shape
    assert "  changed  Tool: properties +tags" in run.stdout.splitlines()

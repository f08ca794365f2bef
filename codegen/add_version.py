"""``python -m codegen add-version VERSION PATH``: pin a new MCP schema version.

PATH is the new version's schema.json exactly as published upstream. The command

* pins it in ``schema/pins.json``: its sha256, its upstream path and URL (the raw GitHub URL of
  ``schema/VERSION/schema.json`` at the pins' snapshot commit, or at ``--commit``; ``--url``
  overrides the URL);
* starts its errata from the previous version's: each erratum tests the old value before
  changing it, and the ones whose test still passes on the new schema are kept in
  ``schema/errata/VERSION.json`` (none kept: no errata file); the others are listed, since
  upstream may have fixed them;
* prints what changed since the previous version, definition by definition;
* checks that the generator can build the new version (unsupported shapes, dropped keywords).

The schema JSON itself is not copied into the project: ``regen`` reads it from
``--schema-dir``, ``$MCPBIND_SCHEMA_DIR`` or ``../shared/schema/VERSION/schema.json``, else
downloads the pinned URL, and checks the sha256 either way. Exit status: 0 pinned, 2 bad usage
or input (nothing is written), or pinned but the generator cannot build the schema yet (fix it
with an erratum or a change to codegen, then run regen).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from codegen.keywords import pointer
from codegen.model import ModelError, build_model
from codegen.pins import (
    PINS_FILE,
    ErratumError,
    Pin,
    PinError,
    apply_erratum,
    load_errata,
    load_pins,
    parse_schema,
    read_json,
    read_schema_bytes,
    schema_dirs,
)

VERSION_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}")
COMMIT_PATTERN = re.compile(r"[0-9a-f]{40}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m codegen add-version",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("version", metavar="VERSION", help="the new version, e.g. 2026-10-01")
    parser.add_argument("path", metavar="PATH", type=Path, help="the version's schema.json, as published")
    parser.add_argument(
        "--commit", help="the upstream commit it comes from (default: the pins' snapshot commit)"
    )
    parser.add_argument("--url", help="where regen downloads it (default: the raw GitHub URL at the commit)")
    parser.add_argument(
        "--schema-dir", type=Path, help="folder with <version>/schema.json files (for the previous version)"
    )
    parser.add_argument(
        "--pins", type=Path, default=PINS_FILE, help="the pins file (default: schema/pins.json)"
    )
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        plan = prepare(args.version, args.path, args.pins, args.schema_dir, args.commit, args.url)
    except PinError as exc:
        print(f"codegen: error: {exc}", file=sys.stderr)
        return 2
    try:
        plan.write()
    except OSError as exc:
        print(f"codegen: error: cannot write {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print("\n".join(plan.report()))
    built = plan.check_build()
    for warning in built.warnings:
        print(f"codegen: warning: schema {plan.version}: {warning}", file=sys.stderr)
    if built.error is not None:
        print(
            f"codegen: error: schema {plan.version} is pinned, but the generator cannot build it: {built.error}\n"
            f"  add an erratum to {plan.errata_path} or teach codegen the shape, then run regen",
            file=sys.stderr,
        )
        return 2
    print(plan.next_step(args.schema_dir))
    return 0


class Plan:
    """Everything ``add-version`` found out, before and after writing it."""

    def __init__(
        self,
        version: str,
        path: Path,
        pins_file: Path,
        pins_data: dict[str, Any],
        entry: dict[str, Any],
        schema: dict[str, Any],
        previous: Pin | None,
        previous_schema: dict[str, Any] | None,
    ) -> None:
        self.version = version
        self.path = path
        self.pins_file = pins_file
        self.pins_data = pins_data
        self.entry = entry
        self.schema = schema
        self.previous = previous
        self.previous_schema = previous_schema
        self.kept: list[dict[str, Any]] = []
        self.dropped: list[tuple[dict[str, Any], str]] = []
        self.patched = schema

    @property
    def errata_path(self) -> Path:
        return self.pins_file.parent / "errata" / f"{self.version}.json"

    def carry_errata(self, errata: list[dict[str, Any]]) -> None:
        """Keep each of the previous errata that still applies to the new schema, in order."""
        for erratum in errata:
            try:
                self.patched = apply_erratum(erratum, self.patched, self.errata_path)
            except ErratumError as exc:
                self.dropped.append((erratum, exc.detail))
            else:
                self.kept.append(erratum)

    def write(self) -> None:
        if self.kept:
            self.errata_path.parent.mkdir(parents=True, exist_ok=True)
            self.errata_path.write_text(json.dumps({"errata": self.kept}, indent=2) + "\n", encoding="utf-8")
            self.entry["errata"] = f"errata/{self.version}.json"
        versions = {**self.pins_data["versions"], self.version: self.entry}
        self.pins_data["versions"] = dict(sorted(versions.items()))
        self.pins_file.write_text(json.dumps(self.pins_data, indent=2) + "\n", encoding="utf-8")

    def report(self) -> list[str]:
        definitions = _definitions(self.schema)
        lines = [
            f"codegen: pinned {self.version} in {self.pins_file} ({len(definitions)} definitions)",
            f"  sha256 {self.entry['sha256']}",
            f"  url    {self.entry['url']}",
        ]
        if self.previous is None or self.previous_schema is None:
            lines.append("no earlier version: nothing to compare, no errata to carry over")
            return lines
        lines += summarize(self.previous.version, self.previous_schema, self.schema)
        where = self.errata_path.relative_to(self.pins_file.parent.parent)
        total = len(self.kept) + len(self.dropped)
        if not total:
            lines.append(f"errata: {self.previous.version} has none, so {self.version} starts with none")
        elif self.kept:
            lines.append(
                f"errata: {len(self.kept)} of {total} carried over from {self.previous.version} into {where}"
            )
        else:
            lines.append(
                f"errata: none of the {total} of {self.previous.version} applies; no errata file written"
            )
        for erratum in self.kept:
            lines.append(f"  kept:    {erratum.get('why', '(no reason given)')}")
        for erratum, reason in self.dropped:
            lines.append(f"  dropped: {erratum.get('why', '(no reason given)')}")
            lines.append(f"           ({reason}: fixed upstream? if not, write it anew)")
        return lines

    def check_build(self) -> Built:
        try:
            model = build_model(self.version, self.patched)
        except ModelError as exc:
            return Built(str(exc), [])
        return Built(None, model.warnings)

    def next_step(self, schema_dir: Path | None) -> str:
        path = self.path.resolve()
        found = path.parent.name == self.version and any(
            d.resolve() == path.parent.parent for d in schema_dirs(schema_dir)
        )
        if found and schema_dir is None:
            where = "regen finds the schema where it is"
        elif path.parent.name == self.version:
            where = f"regen finds the schema with --schema-dir {path.parent.parent}"
        else:
            where = (
                f"regen looks for {self.version}/schema.json under --schema-dir, $MCPBIND_SCHEMA_DIR or "
                "../shared/schema, else downloads the URL above"
            )
        return f"next: run `nox -s regen` (python -m codegen); {where}"


class Built:
    def __init__(self, error: str | None, warnings: list[str]) -> None:
        self.error = error
        self.warnings = warnings


def prepare(
    version: str,
    path: Path,
    pins_file: Path,
    schema_dir: Path | None,
    commit: str | None,
    url: str | None,
) -> Plan:
    """Read and check everything; nothing is written yet."""
    if not VERSION_PATTERN.fullmatch(version):
        raise PinError(f"version {version!r} is not a date like 2026-10-01")
    if commit is not None and not COMMIT_PATTERN.fullmatch(commit):
        raise PinError(f"--commit {commit!r} is not a full 40-digit lowercase hex commit")
    pins = load_pins(pins_file)
    if any(p.version == version for p in pins):
        raise PinError(f"{version} is already pinned in {pins_file}; remove its entry first to pin it anew")
    pins_data: dict[str, Any] = read_json(pins_file, "pins file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PinError(f"cannot read {path}: {exc.strerror or exc}") from exc
    schema = parse_schema(data, str(path))
    commit = commit or pins_data["snapshot_commit"]
    upstream = f"schema/{version}/schema.json"
    entry: dict[str, Any] = {
        "path": upstream,
        "url": url or f"https://raw.githubusercontent.com/{pins_data['repository']}/{commit}/{upstream}",
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    if commit != pins_data["snapshot_commit"]:
        entry = {"commit": commit, **entry}
    earlier = sorted((p for p in pins if p.version < version), key=lambda p: p.version)
    previous = earlier[-1] if earlier else None
    previous_schema = None
    if previous is not None:
        previous_schema = parse_schema(read_schema_bytes(previous, schema_dir), f"schema {previous.version}")
    plan = Plan(version, path, pins_file, pins_data, entry, schema, previous, previous_schema)
    if previous is not None and previous_schema is not None:
        plan.carry_errata(
            [_retarget(e, _defs_key(previous_schema), _defs_key(schema)) for e in load_errata(previous)]
        )
    return plan


def _defs_key(schema: dict[str, Any]) -> str:
    return "$defs" if "$defs" in schema else "definitions"


def _definitions(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.get(_defs_key(schema))
    return defs if isinstance(defs, dict) else {}


def _retarget(value: Any, old: str, new: str) -> Any:
    """An erratum written for a draft-07 schema (``definitions``) moved to 2020-12 (``$defs``), or back."""
    if old == new:
        return value
    if isinstance(value, list):
        return [_retarget(v, old, new) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in ("path", "from") and isinstance(item, str) and item.startswith(f"/{old}/"):
            item = f"/{new}/" + item[len(old) + 2 :]
        elif key == "$ref" and isinstance(item, str) and item.startswith(f"#/{old}/"):
            item = f"#/{new}/" + item[len(old) + 3 :]
        else:
            item = _retarget(item, old, new)
        out[key] = item
    return out


# -- what changed --------------------------------------------------------------------------------


def _normal(value: Any) -> Any:
    """``value`` with references made independent of the dialect (``#/$defs/X`` and ``#/definitions/X``)."""
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, dict):
        return {
            k: (v.rsplit("/", 1)[-1] if k == "$ref" and isinstance(v, str) else _normal(v))
            for k, v in value.items()
        }
    return value


def _without_descriptions(value: Any) -> Any:
    if isinstance(value, list):
        return [_without_descriptions(v) for v in value]
    if isinstance(value, dict):
        return {k: _without_descriptions(v) for k, v in value.items() if k != "description"}
    return value


def _properties(definition: dict[str, Any]) -> dict[str, Any]:
    """The definition's own properties and those of the inline parts of its ``allOf``."""
    out = dict(definition.get("properties", {}))
    for part in definition.get("allOf", []):
        if isinstance(part, dict) and "$ref" not in part:
            out.update(part.get("properties", {}))
    return out


def _refs(members: Any) -> list[str]:
    return [m["$ref"] for m in members or [] if isinstance(m, dict) and isinstance(m.get("$ref"), str)]


def _plus_minus(label: str, before: list[str], after: list[str]) -> str | None:
    added = [f"+{x}" for x in after if x not in before]
    removed = [f"-{x}" for x in before if x not in after]
    return f"{label} {', '.join(added + removed)}" if added or removed else None


def describe_change(before: dict[str, Any], after: dict[str, Any]) -> str:
    """What differs between two versions of one definition, in one line."""
    parts: list[str] = []
    old_props, new_props = _properties(before), _properties(after)
    members = [f"+{name}" for name in new_props if name not in old_props]
    members += [f"-{name}" for name in old_props if name not in new_props]
    members += [
        f"~{name}"
        for name in new_props
        if name in old_props
        and _without_descriptions(old_props[name]) != _without_descriptions(new_props[name])
    ]
    if members:
        parts.append("properties " + ", ".join(members))
    required = _plus_minus("required", before.get("required", []), after.get("required", []))
    if required:
        parts.append(required)
    for key in ("anyOf", "oneOf", "allOf"):
        if _without_descriptions(before.get(key)) != _without_descriptions(after.get(key)):
            parts.append(_plus_minus(key, _refs(before.get(key)), _refs(after.get(key))) or f"{key} changed")
    skip = {"properties", "required", "anyOf", "oneOf", "allOf", "description"}
    keywords = sorted(
        k for k in before.keys() | after.keys() if k not in skip and before.get(k) != after.get(k)
    )
    if keywords:
        parts.append(", ".join(keywords) + " changed")
    if not parts:
        parts.append("descriptions only")
    return "; ".join(parts)


def summarize(previous: str, before_schema: dict[str, Any], after_schema: dict[str, Any]) -> list[str]:
    """Per definition: added, removed, and changed (with what changed), since ``previous``."""
    before = {k: _normal(v) for k, v in _definitions(before_schema).items()}
    after = {k: _normal(v) for k, v in _definitions(after_schema).items()}
    added = sorted(after.keys() - before.keys())
    removed = sorted(before.keys() - after.keys())
    changed = sorted(name for name in before.keys() & after.keys() if before[name] != after[name])
    unchanged = len(before.keys() & after.keys()) - len(changed)
    lines = [
        f"since {previous}: {len(added)} definitions added, {len(removed)} removed, "
        f"{len(changed)} changed, {unchanged} unchanged"
    ]
    key = _defs_key(after_schema)
    lines += [f"  added    {name}" for name in added]
    lines += [f"  removed  {name}" for name in removed]
    lines += [f"  changed  {name}: {describe_change(before[name], after[name])}" for name in changed]
    if _defs_key(before_schema) != key:
        lines.append(f"  (the definitions moved from {pointer(_defs_key(before_schema))} to {pointer(key)})")
    return lines

"""Find, verify and correct the pinned upstream schema files.

``schema/pins.json`` names each published version's upstream URL and sha256 and, optionally,
its errata overlay (a version without an ``errata`` entry has none). A schema is read from the
first of: ``--schema-dir``, the folder named by ``$MCPBIND_SCHEMA_DIR``, ``../shared/schema``
beside the project, a download of the pinned URL. Whatever the source, its sha256 must match
the pin. Every failure (a missing or unreachable schema, a bad pin, an erratum that no longer
applies) is a :class:`PinError` with a message for the user.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonpatch
import jsonpointer

PROJECT = Path(__file__).resolve().parent.parent
PINS_FILE = PROJECT / "schema" / "pins.json"
SHARED_SCHEMA_DIR = PROJECT.parent / "shared" / "schema"
SCHEMA_DIR_ENV = "MCPBIND_SCHEMA_DIR"
DOWNLOAD_TIMEOUT = 60.0


class PinError(Exception):
    """A schema file is missing, does not match its pin, or an erratum no longer applies."""


@dataclass(frozen=True)
class Pin:
    version: str
    repository: str
    commit: str
    path: str
    url: str
    sha256: str
    errata: Path | None

    @property
    def module(self) -> str:
        return "v" + self.version.replace("-", "_")

    @property
    def errata_label(self) -> str:
        """The errata file as the generated headers name it, or ``none``."""
        return "none" if self.errata is None else f"schema/{self.errata.parent.name}/{self.errata.name}"


def read_json(path: Path, what: str) -> Any:
    """``path`` parsed as JSON; a missing or malformed file is a :class:`PinError`."""
    try:
        return json.loads(path.read_bytes())
    except OSError as exc:
        raise PinError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise PinError(f"{what} {path} is not valid JSON: {exc}") from exc


def load_pins(pins_file: Path = PINS_FILE) -> list[Pin]:
    """Every pinned version, in the order of ``pins.json`` (oldest first)."""
    data = read_json(pins_file, "pins file")
    try:
        pins = [
            Pin(
                version=version,
                repository=data["repository"],
                commit=entry.get("commit", data["snapshot_commit"]),
                path=entry["path"],
                url=entry["url"],
                sha256=entry["sha256"],
                errata=pins_file.parent / entry["errata"] if entry.get("errata") else None,
            )
            for version, entry in data["versions"].items()
        ]
    except (KeyError, TypeError, AttributeError) as exc:
        raise PinError(f"{pins_file}: malformed pins file (missing or wrong entry {exc})") from exc
    for pin in pins:
        if pin.errata is not None and not pin.errata.is_file():
            raise PinError(f"{pins_file}: the errata file of {pin.version} does not exist: {pin.errata}")
    return pins


def schema_dirs(schema_dir: Path | None = None) -> list[Path]:
    """Where a schema is looked for on disk, in order: ``schema_dir``, ``$MCPBIND_SCHEMA_DIR``, ``../shared/schema``."""
    env = os.environ.get(SCHEMA_DIR_ENV)
    dirs = [schema_dir, Path(env) if env else None, SHARED_SCHEMA_DIR]
    return [d for d in dirs if d is not None]


def local_schema(pin: Pin, schema_dir: Path | None = None) -> Path | None:
    """The first ``<dir>/<version>/schema.json`` on disk for ``pin`` (not yet verified), if any."""
    for directory in schema_dirs(schema_dir):
        candidate = directory / pin.version / "schema.json"
        if candidate.is_file():
            return candidate
    return None


def read_schema_bytes(pin: Pin, schema_dir: Path | None = None, *, allow_download: bool = True) -> bytes:
    """The exact pinned bytes of ``pin``'s schema.json, from disk or the pinned URL."""
    path = local_schema(pin, schema_dir)
    if path is not None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise PinError(f"schema {pin.version}: cannot read {path}: {exc.strerror or exc}") from exc
        _verify(pin, data, str(path))
        return data
    looked = ", ".join(str(d / pin.version / "schema.json") for d in schema_dirs(schema_dir))
    if not allow_download:
        raise PinError(f"schema {pin.version} not found (looked in {looked})")
    try:
        with urllib.request.urlopen(pin.url, timeout=DOWNLOAD_TIMEOUT) as response:
            data = bytes(response.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise PinError(
            f"schema {pin.version} not found (looked in {looked}) and the pinned URL {pin.url} "
            f"could not be downloaded: {reason}; pass --schema-dir DIR with {pin.version}/schema.json in it"
        ) from exc
    _verify(pin, data, pin.url)
    return data


def _verify(pin: Pin, data: bytes, source: str) -> None:
    digest = hashlib.sha256(data).hexdigest()
    if digest != pin.sha256:
        raise PinError(f"{source}: sha256 {digest} does not match the pin {pin.sha256} for {pin.version}")


def load_errata(pin: Pin) -> list[dict[str, Any]]:
    """The version's errata (none when its pin names no errata file)."""
    if pin.errata is None:
        return []
    overlay = read_json(pin.errata, "errata file")
    errata = overlay.get("errata") if isinstance(overlay, dict) else None
    if not isinstance(errata, list):
        raise PinError(f'{pin.errata}: expected an object with an "errata" list')
    return errata


class ErratumError(PinError):
    """An erratum that does not apply; ``detail`` says which of its operations failed and how."""

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(message)
        self.detail = detail


def apply_erratum(erratum: dict[str, Any], schema: dict[str, Any], source: Path | str) -> dict[str, Any]:
    """``schema`` with one erratum applied; it must begin with a ``test`` of the old value."""
    patch = erratum.get("patch") if isinstance(erratum, dict) else None
    if (
        not isinstance(patch, list)
        or not patch
        or not isinstance(patch[0], dict)
        or patch[0].get("op") != "test"
    ):
        raise PinError(f"{source}: every erratum must start by testing the old value")
    try:
        result: dict[str, Any] = jsonpatch.apply_patch(schema, patch)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException):
        detail = _failed_operation(patch, schema)
        why = erratum.get("why", "no reason given")
        raise ErratumError(f"{source}: erratum no longer applies ({why}): {detail}", detail) from None
    return result


def _failed_operation(patch: list[Any], schema: dict[str, Any]) -> str:
    """Which operation of ``patch`` fails on ``schema``, in a few words."""
    document: Any = schema
    for op in patch:
        try:
            document = jsonpatch.apply_patch(document, [op])
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
            path = op.get("path") if isinstance(op, dict) else None
            kind = op.get("op") if isinstance(op, dict) else None
            if kind == "test" and isinstance(path, str):
                try:
                    jsonpointer.resolve_pointer(document, path)
                except jsonpointer.JsonPointerException:
                    return f"{path} does not exist any more"
                return f"the value at {path} is no longer the tested one"
            text = str(exc)
            return f"{kind} {path}: {text if len(text) <= 160 else text[:157] + '...'}"
    return "the patch fails as a whole"


def apply_errata(pin: Pin, schema: dict[str, Any]) -> dict[str, Any]:
    """Apply the version's JSON-patch errata; each begins with a ``test`` of the old value."""
    for erratum in load_errata(pin):
        schema = apply_erratum(erratum, schema, pin.errata or pin.version)
    return schema


def parse_schema(data: bytes, source: str) -> dict[str, Any]:
    """Schema bytes as a JSON object; anything else is a :class:`PinError`."""
    try:
        schema = json.loads(data)
    except ValueError as exc:
        raise PinError(f"{source} is not valid JSON: {exc}") from exc
    if not isinstance(schema, dict):
        raise PinError(f"{source} is not a JSON Schema object")
    return schema


def load_schema(pin: Pin, schema_dir: Path | None = None) -> dict[str, Any]:
    """The pinned schema with its errata applied."""
    schema = parse_schema(read_schema_bytes(pin, schema_dir), f"schema {pin.version}")
    return apply_errata(pin, schema)

"""Find, verify and correct the pinned upstream schema files.

``schema/pins.json`` names each published version's upstream URL and sha256 and its errata
overlay. A schema is read from the first of: ``--schema-dir``, ``../shared/schema`` beside the
project, a download of the pinned URL. Whatever the source, its sha256 must match the pin.
"""

from __future__ import annotations

import hashlib
import json
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonpatch

PROJECT = Path(__file__).resolve().parent.parent
PINS_FILE = PROJECT / "schema" / "pins.json"
SHARED_SCHEMA_DIR = PROJECT.parent / "shared" / "schema"


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
    errata: Path

    @property
    def module(self) -> str:
        return "v" + self.version.replace("-", "_")


def load_pins() -> list[Pin]:
    data = json.loads(PINS_FILE.read_text(encoding="utf-8"))
    return [
        Pin(
            version=version,
            repository=data["repository"],
            commit=data["snapshot_commit"],
            path=entry["path"],
            url=entry["url"],
            sha256=entry["sha256"],
            errata=PINS_FILE.parent / entry["errata"],
        )
        for version, entry in data["versions"].items()
    ]


def _candidates(pin: Pin, schema_dir: Path | None) -> list[Path]:
    dirs = [d for d in (schema_dir, SHARED_SCHEMA_DIR) if d is not None]
    return [d / pin.version / "schema.json" for d in dirs]


def read_schema_bytes(pin: Pin, schema_dir: Path | None = None, *, allow_download: bool = True) -> bytes:
    """The exact pinned bytes of ``pin``'s schema.json, from disk or the pinned URL."""
    for candidate in _candidates(pin, schema_dir):
        if candidate.is_file():
            data = candidate.read_bytes()
            _verify(pin, data, str(candidate))
            return data
    if not allow_download:
        raise PinError(f"schema {pin.version} not found in {[str(c) for c in _candidates(pin, schema_dir)]}")
    with urllib.request.urlopen(pin.url, timeout=60) as response:
        data = response.read()
    _verify(pin, data, pin.url)
    return bytes(data)


def _verify(pin: Pin, data: bytes, source: str) -> None:
    digest = hashlib.sha256(data).hexdigest()
    if digest != pin.sha256:
        raise PinError(f"{source}: sha256 {digest} does not match the pin {pin.sha256} for {pin.version}")


def apply_errata(pin: Pin, schema: dict[str, Any]) -> dict[str, Any]:
    """Apply the version's JSON-patch errata; each begins with a ``test`` of the old value."""
    overlay = json.loads(pin.errata.read_text(encoding="utf-8"))
    for erratum in overlay["errata"]:
        patch = erratum["patch"]
        if not patch or patch[0]["op"] != "test":
            raise PinError(f"{pin.errata}: every erratum must start by testing the old value")
        try:
            schema = jsonpatch.apply_patch(schema, patch)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
            raise PinError(f"{pin.errata}: erratum no longer applies ({erratum['why']}): {exc}") from exc
    return schema


def load_schema(pin: Pin, schema_dir: Path | None = None) -> dict[str, Any]:
    """The pinned schema with its errata applied."""
    schema: dict[str, Any] = json.loads(read_schema_bytes(pin, schema_dir))
    return apply_errata(pin, schema)

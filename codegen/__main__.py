"""Regenerate ``generated/`` from the pinned schemas, or pin a new schema version.

``python -m codegen [--check] [--schema-dir DIR] [--out DIR] [--pins FILE]`` regenerates the
output tree; with ``--check`` nothing is written and the files that would change are listed.
``python -m codegen add-version VERSION PATH`` pins a new version: its sha256, errata started
from the previous version's, and what changed (see ``python -m codegen add-version --help``).

Exit status: 0 done (or up to date); 1 ``--check`` found the output out of date; 2 bad usage or
input (a schema missing, unreachable or not matching its pin, an erratum that no longer
applies, a schema shape the generator cannot represent), with one message on stderr. Keywords
the generator drops are listed as warnings on stderr and do not change the status.
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from codegen.emit import methods_module, package_init, structs_module, stubs_module, versions_init
from codegen.model import ModelError, build_model
from codegen.pins import PINS_FILE, PROJECT, PinError, load_pins, load_schema

EXIT_OK = 0
EXIT_OUT_OF_DATE = 1
EXIT_INPUT = 2


def render(
    schema_dir: Path | None, pins_file: Path = PINS_FILE, warnings: list[str] | None = None
) -> dict[str, str]:
    """Relative path -> file text for the whole generated tree; dropped keywords go to ``warnings``."""
    pins = load_pins(pins_file)
    if not pins:
        raise PinError(f"{pins_file}: no versions are pinned")
    files: dict[str, str] = {"mcpbind/schema/__init__.py": versions_init(pins)}
    for pin in pins:
        try:
            model = build_model(pin.version, load_schema(pin, schema_dir))
        except ModelError as exc:
            raise ModelError(f"schema {pin.version}: {exc}") from exc
        if warnings is not None:
            warnings += [f"schema {pin.version}: {w}" for w in model.warnings]
        base = f"mcpbind/schema/{pin.module}"
        files[f"{base}/__init__.py"] = package_init(pin, model)
        files[f"{base}/structs.py"] = structs_module(pin, model)
        files[f"{base}/methods.py"] = methods_module(pin, model)
        files[f"{base}/stubs.py"] = stubs_module(pin, model)
    return files


class FormatError(Exception):
    """ruff could not format the generated tree."""


def format_tree(root: Path) -> None:
    """Format with ruff (its version is pinned by the nox session), twice for a fixed point."""
    command = [sys.executable, "-m", "ruff", "format", "--quiet", "--config", str(PROJECT / "pyproject.toml")]
    for _ in range(2):
        try:
            subprocess.run([*command, str(root)], check=True, capture_output=True, text=True)
        except subprocess.CalledProcessError as exc:
            detail = (exc.stderr or exc.stdout or "").strip().splitlines()
            raise FormatError(
                f"formatting the output with ruff failed ({detail[-1] if detail else exc}); "
                "`nox -s regen` installs the pinned ruff"
            ) from exc


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m codegen",
        usage="%(prog)s [-h] [--check] [--schema-dir DIR] [--out DIR] [--pins FILE]\n"
        "       %(prog)s add-version [-h] VERSION PATH [--commit SHA] [--url URL] [--schema-dir DIR] [--pins FILE]",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if generated/ is out of date"
    )
    parser.add_argument(
        "--schema-dir",
        type=Path,
        help="folder with <version>/schema.json files, looked in first "
        "(then $MCPBIND_SCHEMA_DIR, ../shared/schema, the pinned URL)",
    )
    parser.add_argument(
        "--out", type=Path, default=PROJECT / "generated", help="output root (default: generated/)"
    )
    parser.add_argument(
        "--pins",
        type=Path,
        default=PINS_FILE,
        help="the pins file (default: schema/pins.json); errata are beside it",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["add-version"]:
        from codegen.add_version import main as add_version

        return add_version(argv[1:])
    args = _parser().parse_args(argv)
    warnings: list[str] = []
    try:
        files = render(args.schema_dir, args.pins, warnings)
    except (PinError, ModelError) as exc:
        return _fail(exc)
    finally:
        for warning in warnings:
            print(f"codegen: warning: {warning}", file=sys.stderr)
    try:
        return _write(files, args.out, check=args.check)
    except (FormatError, OSError) as exc:
        return _fail(exc)


def _fail(exc: Exception) -> int:
    message = str(exc)
    if isinstance(exc, OSError) and exc.filename:
        message = f"{exc.filename}: {exc.strerror or exc}"
    print(f"codegen: error: {message}", file=sys.stderr)
    return EXIT_INPUT


def _write(files: dict[str, str], out: Path, *, check: bool) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        staging = Path(tmp) / "generated"
        for rel, text in files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        format_tree(staging)
        fresh = {rel: (staging / rel).read_text(encoding="utf-8") for rel in files}
    existing = (
        {
            str(p.relative_to(out)): p.read_text(encoding="utf-8")
            for p in sorted(out.rglob("*.py"))
            if "__pycache__" not in p.parts
        }
        if out.exists()
        else {}
    )
    changed = sorted(rel for rel in fresh if existing.get(rel) != fresh[rel])
    stale = sorted(set(existing) - set(fresh))
    if check:
        for rel in changed:
            diff = difflib.unified_diff(
                existing.get(rel, "").splitlines(),
                fresh[rel].splitlines(),
                f"a/{rel}",
                f"b/{rel}",
                lineterm="",
                n=1,
            )
            print("\n".join(list(diff)[:40]))
        for rel in stale:
            print(f"stale file (not generated any more): {rel}")
        if changed or stale:
            print(
                f"codegen: generated/ is out of date ({len(changed)} changed, {len(stale)} stale); run `nox -s regen`"
            )
            return EXIT_OUT_OF_DATE
        print(f"codegen: generated/ is up to date ({len(fresh)} files)")
        return EXIT_OK
    for rel in stale:
        (out / rel).unlink()
    for rel in changed:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(fresh[rel], encoding="utf-8")
    for directory in sorted((out / "mcpbind" / "schema").glob("v*"), reverse=True):
        if directory.is_dir() and not any(directory.glob("*.py")):
            shutil.rmtree(directory)
    print(f"codegen: wrote {len(changed)} file(s), removed {len(stale)}, {len(fresh)} in all")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

"""``python -m codegen [--check] [--schema-dir DIR] [--out DIR]``: regenerate ``generated/``.

Without ``--check`` the output tree is rewritten; with it nothing is written and the exit
status is 1 when any file would change (the list of files is printed).
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
from codegen.model import build_model
from codegen.pins import PROJECT, PinError, load_pins, load_schema


def render(schema_dir: Path | None) -> dict[str, str]:
    """Relative path -> file text for the whole generated tree."""
    pins = load_pins()
    files: dict[str, str] = {"mcpbind/schema/__init__.py": versions_init(pins)}
    for pin in pins:
        model = build_model(pin.version, load_schema(pin, schema_dir))
        base = f"mcpbind/schema/{pin.module}"
        files[f"{base}/__init__.py"] = package_init(pin, model)
        files[f"{base}/structs.py"] = structs_module(pin, model)
        files[f"{base}/methods.py"] = methods_module(pin, model)
        files[f"{base}/stubs.py"] = stubs_module(pin, model)
    return files


def format_tree(root: Path) -> None:
    """Format with ruff (its version is pinned by the nox session), twice for a fixed point."""
    for _ in range(2):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "ruff",
                "format",
                "--quiet",
                "--config",
                str(PROJECT / "pyproject.toml"),
                str(root),
            ],
            check=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if generated/ is not up to date")
    parser.add_argument("--schema-dir", type=Path, help="folder with <version>/schema.json files")
    parser.add_argument("--out", type=Path, default=PROJECT / "generated", help="output root")
    args = parser.parse_args(argv)
    try:
        files = render(args.schema_dir)
    except PinError as exc:
        print(f"codegen: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        staging = Path(tmp) / "generated"
        for rel, text in files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        format_tree(staging)
        fresh = {rel: (staging / rel).read_text(encoding="utf-8") for rel in files}
    out: Path = args.out
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
    if args.check:
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
            return 1
        print(f"codegen: generated/ is up to date ({len(fresh)} files)")
        return 0
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
    return 0


if __name__ == "__main__":
    sys.exit(main())

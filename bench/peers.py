"""The peers' virtual environments: each SDK the benchmarks compare against lives in a venv of its own.

``.bench/venvs/<name>`` (``.bench/`` is gitignored) is made with ``python -m venv`` and pip on first
use and reused afterwards; a venv whose requirements or interpreter changed since it was made is
made again. mcpbind itself is never installed there: its side runs from this checkout (or the
installed package) with the interpreter that runs the benchmark.

    python -m bench.peers [--rebuild] [name ...]     # make (or check) the venvs, print versions

The venvs are made with the interpreter running this module (its base interpreter, not a venv's
packages), so the peers run on the same CPython as mcpbind.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENVS = ROOT / ".bench" / "venvs"
MARKER = "bench-peer.json"


@dataclass(frozen=True)
class Peer:
    name: str
    requirements: tuple[str, ...]
    # Distributions whose versions the reports name.
    report: tuple[str, ...]


PEERS: dict[str, Peer] = {
    peer.name: peer
    for peer in (
        Peer("official", ("mcp==2.3.0",), ("mcp", "pydantic", "anyio", "starlette")),
        # httptools: the HTTP parser uvicorn serves every server of bench/streamable_http.py with
        # (FastMCP's there too, in this venv); the stdio benchmarks do not use it.
        Peer(
            "fastmcp",
            ("fastmcp==4.2.3", "httptools>=0.6"),
            ("fastmcp", "mcp", "pydantic", "anyio", "uvicorn", "httptools"),
        ),
        # sparfenyuk's mcp-proxy (stdio <-> SSE / Streamable HTTP, on the official SDK 1.x): the
        # proxy benchmark (bench/proxy.py) only; httptools: the parser its uvicorn then uses, as
        # `mcpbind serve`'s does beside it.
        Peer(
            "mcp-proxy",
            ("mcp-proxy==0.13.0", "httptools>=0.6"),
            ("mcp-proxy", "mcp", "uvicorn", "httptools", "starlette", "pydantic"),
        ),
    )
}


class PeerError(Exception):
    """A venv could not be made or does not work."""


def venv_dir(name: str) -> Path:
    return VENVS / name


def python_of(name: str) -> Path:
    return venv_dir(name) / "bin" / "python"


def _wanted(peer: Peer) -> dict[str, object]:
    return {
        "requirements": list(peer.requirements),
        "python": sys.version.split()[0],
        "implementation": sys.implementation.name,
    }


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _is_current(peer: Peer) -> bool:
    marker = venv_dir(peer.name) / MARKER
    if not python_of(peer.name).exists() or not marker.exists():
        return False
    try:
        made = json.loads(marker.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(made, dict) and made.get("wanted") == _wanted(peer)


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip()[-3000:]
        raise PeerError(f"{what} failed (exit {done.returncode}): {' '.join(command)}\n{tail}")


def ensure(name: str, rebuild: bool = False) -> Path:
    """The interpreter of the peer's venv, made first if it is missing, stale or ``rebuild``."""
    peer = PEERS[name]
    if not rebuild and _is_current(peer):
        return python_of(name)
    where = venv_dir(name)
    if where.exists():
        shutil.rmtree(where)
    where.parent.mkdir(parents=True, exist_ok=True)
    _log(f"bench: making the {name} venv in {where} ({', '.join(peer.requirements)}) ...")
    _run([sys.executable, "-m", "venv", str(where)], f"python -m venv {where}")
    pip = [str(python_of(name)), "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]
    _run([*pip, "install", *peer.requirements], f"pip install into {where}")
    versions = installed_versions(name)
    missing = [dist for dist in peer.report[:1] if dist not in versions]
    if missing:
        raise PeerError(f"the {name} venv lacks {missing} after pip install")
    (where / MARKER).write_text(json.dumps({"wanted": _wanted(peer), "versions": versions}, indent=1))
    _log(f"bench: {name} venv ready: {', '.join(f'{k} {v}' for k, v in versions.items())}")
    return python_of(name)


_PROBE = """
import json, sys
from importlib import metadata
out = {}
for dist in sys.argv[1:]:
    try:
        out[dist] = metadata.version(dist)
    except metadata.PackageNotFoundError:
        pass
print(json.dumps(out))
"""


def versions_seen(
    python: str, dists: Sequence[str], env: dict[str, str] | None = None, what: str | None = None
) -> dict[str, str]:
    """The versions of the distributions ``dists`` that the interpreter ``python`` sees (one not
    installed there is left out), run with ``env`` (None: this process's). :class:`PeerError`
    if it does not run, naming it as ``what`` (else by its path)."""
    done = subprocess.run(
        [python, "-c", _PROBE, *dists],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env=env,
    )
    if done.returncode != 0:
        raise PeerError(f"{what or python} does not run: {done.stderr.strip()[-2000:]}")
    versions: dict[str, str] = json.loads(done.stdout)
    return versions


def installed_versions(name: str) -> dict[str, str]:
    """Versions of the distributions the reports name, as the peer's venv sees them."""
    return versions_seen(str(python_of(name)), PEERS[name].report, what=f"the {name} venv's python")


def peer_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a process that runs in a peer's venv: nothing of this checkout on its path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PYTHONFAULTHANDLER"] = "1"
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if extra:
        env.update(extra)
    return env


def describe(names: list[str] | None = None) -> str:
    """One line per ready venv: its requirements and the versions it holds."""
    lines = []
    for name in names or list(PEERS):
        if not _is_current(PEERS[name]):
            continue
        versions = installed_versions(name)
        lines.append(
            f"{name} venv (.bench/venvs/{name}): " + ", ".join(f"{k} {v}" for k, v in versions.items())
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help=f"peers, from: {', '.join(PEERS)} (default: all)")
    parser.add_argument("--rebuild", action="store_true", help="make the venvs again even if current")
    args = parser.parse_args(argv)
    names: list[str] = args.names or list(PEERS)
    unknown = [n for n in names if n not in PEERS]
    if unknown:
        parser.error(f"unknown peers {unknown}; choose from {', '.join(PEERS)}")
    try:
        for name in names:
            ensure(name, rebuild=args.rebuild)
    except PeerError as exc:
        print(f"bench.peers: {exc}", file=sys.stderr)
        return 1
    print(describe(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())

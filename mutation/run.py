"""Running one group: stage a copy of the repository that mutmut can work in, run mutmut there,
and keep what it found in mutation/results/<group>.json.

mutmut 3 copies the source root it is given into ``mutants/`` and names every mutant after the
module path of its file relative to the folder it runs in, with only a ``src/`` prefix dropped.
mcpbind has two source roots (runtime/ and generated/) joined into one package at import time,
so mutmut would name the mutants ``runtime.mcpbind...`` while the tests import ``mcpbind...``,
and find no test for any of them. The stage is therefore the layout of an installed wheel:
``src/mcpbind`` (runtime/mcpbind with generated/mcpbind merged in), ``tests/`` and a
pyproject.toml holding the group's ``[tool.mutmut]`` and the pytest options. mcpbind itself is not
installed in the session, so the tests import the mutated copy.
"""

from __future__ import annotations

import datetime
import glob
import json
import os
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from mutation.groups import Group
from mutation.mutants import module_results, survivors

ROOT = Path(__file__).resolve().parent.parent
# Where each group is staged and run (ignored by git).
WORK = ROOT / ".mutation"
RESULTS = ROOT / "mutation" / "results"
SOURCE_ROOTS = ("runtime", "generated")
# What the tests import or read besides mcpbind (codegen.pins and the schemas' pins, examples).
ALSO_COPY = ("codegen", "schema", "examples")

PYPROJECT = """\
# Written by mutation/run.py for mutmut (`nox -s mutants`); the repository's pytest options.
[tool.pytest.ini_options]
pythonpath = ["."]
addopts = {addopts}
xfail_strict = true

[tool.mutmut]
source_paths = ["src"]
only_mutate = {only_mutate}
pytest_add_cli_args_test_selection = {tests}
pytest_add_cli_args = {pytest_args}
also_copy = {also_copy}
use_git_change_detection = false
"""


def resolve_modules(group: Group) -> tuple[list[str], list[str]]:
    """The group's modules that exist (repository paths, sorted) and the patterns matching none."""
    present: set[str] = set()
    missing: list[str] = []
    for pattern in group.modules:
        found = [
            Path(path).relative_to(ROOT).as_posix()
            for path in glob.glob(str(ROOT / pattern))
            if Path(path).is_file()
        ]
        if not found:
            missing.append(pattern)
        present.update(found)
    return sorted(present), missing


def staged_path(module: str) -> str:
    """runtime/mcpbind/x.py -> src/mcpbind/x.py (the same for generated/)."""
    root, _, rest = module.partition("/")
    if root not in SOURCE_ROOTS:
        raise ValueError(f"{module}: not under a source root {SOURCE_ROOTS}")
    return f"src/{rest}"


def stage(group: Group, modules: list[str], work: Path) -> None:
    """A fresh copy of the package (both roots merged), the tests and the configuration in ``work``."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    for root in SOURCE_ROOTS:
        shutil.copytree(ROOT / root / "mcpbind", work / "src" / "mcpbind", ignore=skip, dirs_exist_ok=True)
    for folder in ("tests", *ALSO_COPY):
        shutil.copytree(ROOT / folder, work / folder, ignore=skip)
    # The specification's examples and schemas beside the repository (../shared), found by the
    # tests and codegen.pins from the folder above the tests' (the stage, as mutmut runs them in
    # mutants/).
    shared = ROOT.parent / "shared"
    if shared.is_dir():
        (work / "shared").symlink_to(shared, target_is_directory=True)
    pytest_args = ["-q", *(f"--ignore={path}" for path in group.ignore)]
    # Deselected through the pytest options (not mutmut's, whose change would discard the verdicts
    # of a run resumed with --keep).
    addopts = " ".join(
        ["-ra --strict-markers -p no:cacheprovider", *(f"--deselect={test}" for test in group.deselect)]
    )
    (work / "pyproject.toml").write_text(
        PYPROJECT.format(
            addopts=json.dumps(addopts),
            only_mutate=json.dumps([staged_path(module) for module in modules]),
            tests=json.dumps(list(group.tests)),
            pytest_args=json.dumps(pytest_args),
            also_copy=json.dumps(list(ALSO_COPY)),
        ),
        encoding="utf-8",
    )


def git_revision() -> str:
    """HEAD's commit, with ``+dirty`` when the mutated folders differ from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", *SOURCE_ROOTS, "tests"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}+dirty" if dirty else head


def run_group(group: Group, *, jobs: int, keep: bool) -> Path:
    """Stage the group (unless ``keep`` and it was staged before), run mutmut, write its results."""
    modules, missing = resolve_modules(group)
    if not modules:
        raise SystemExit(f"mutants: group {group.name}: none of its modules exist ({missing})")
    work = WORK / group.name
    if not (keep and (work / "pyproject.toml").exists()):
        stage(group, modules, work)
    mutmut = Path(sys.executable).parent / "mutmut"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    log = work / "mutmut.log"
    print(f"mutants: {group.name}: {len(modules)} modules, tests {' '.join(group.tests)}; log {log}")
    started = datetime.datetime.now(datetime.timezone.utc)
    clock = time.monotonic()
    status = run_mutmut(mutmut, work, env, log, jobs=jobs)
    if status == 0:
        status = rerun_survivors(work, modules, mutmut, env, jobs=jobs)
    if status == 0:
        status = recheck_timeouts(work, modules, mutmut, env)
    wall = time.monotonic() - clock
    if status != 0:
        tail = log.read_bytes()[-3000:].decode("utf-8", "replace")
        raise SystemExit(f"mutants: mutmut failed in {work} (exit status {status}):\n{tail}")
    return write_results(group, modules, missing, work, started=started, wall=wall, jobs=jobs)


def run_mutmut(
    mutmut: Path, work: Path, env: dict[str, str], log: Path, *, jobs: int, names: list[str] | None = None
) -> int:
    """``mutmut run`` in ``work`` (of ``names`` only, if given), its output to ``log``; its exit status."""
    with log.open("wb") as output:
        return subprocess.run(
            [str(mutmut), "run", "--max-children", str(jobs), *(names or [])],
            cwd=work,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            check=False,
        ).returncode


def rerun_survivors(work: Path, modules: list[str], mutmut: Path, env: dict[str, str], *, jobs: int) -> int:
    """Test the survivors again, each in a process that has not run the tests.

    mutmut forks each mutant's test run from a process that has run the tests once already, so
    whatever that process holds is not rebuilt for the mutant: a function whose result is cached
    (``functools.cache``), and everything only it calls, answers from that process's cache and its
    mutant never runs (codecs.py's tables). The first pass's survivors go through a second in
    mutmut's fork-server mode, forked from a process that has only collected the tests, so that
    every cache starts empty (nothing in mcpbind fills one on import); only what survives both
    counts. (The time limits stay: mutmut would discard every verdict of *timeout* on a change.)
    """
    names = [name for module in modules for name in survivors(work, staged_path(module))]
    if not names:
        return 0
    pyproject = work / "pyproject.toml"
    first_pass = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(first_pass + 'process_isolation = "forkserver"\n', encoding="utf-8")
    print(f"mutants: the {len(names)} survivors again, each in a fresh process")
    try:
        return run_mutmut(mutmut, work, env, work / "mutmut-survivors.log", jobs=jobs, names=names)
    finally:
        pyproject.write_text(first_pass, encoding="utf-8")


def retest_survivors(group: Group, *, jobs: int) -> Path:
    """Test again, against the current tests, only the mutants the group's last full run left
    undetected, each in a fresh process; every other verdict is carried over from that run.

    Adding tests cannot bring a killed mutant back, so after tests are added this gives the same
    score as a full run, in the time of the survivors alone. It holds only while the mutants are
    the same: the group's modules must not have changed since the recorded run's revision (a
    changed module renames and renumbers its mutants), so that is checked first.
    """
    previous_path = RESULTS / f"{group.name}.json"
    if not previous_path.exists():
        raise SystemExit(f"mutants: {group.name}: no results to re-test; run the whole group first")
    previous: dict[str, Any] = json.loads(previous_path.read_text(encoding="utf-8"))
    base = previous.get("full_run", previous)
    revision = str(base["revision"])
    modules, missing = resolve_modules(group)
    changed = modules_changed_since(revision.removesuffix("+dirty"), modules)
    if revision.endswith("+dirty") or changed or modules != [m["file"] for m in previous["modules"]]:
        raise SystemExit(
            f"mutants: {group.name}: its modules differ from the run at {revision} "
            f"({', '.join(changed) or 'the module list or a dirty tree'}); run the whole group"
        )
    names = [item["mutant"] for module in previous["modules"] for item in module["not_detected"]]
    work = WORK / group.name
    stage(group, modules, work)
    mutmut = Path(sys.executable).parent / "mutmut"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    started = datetime.datetime.now(datetime.timezone.utc)
    clock = time.monotonic()
    pyproject = work / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8") + 'process_isolation = "forkserver"\n', encoding="utf-8"
    )
    print(
        f"mutants: {group.name}: the {len(names)} mutants left by the run at {revision}, each in a fresh process"
    )
    status = (
        run_mutmut(mutmut, work, env, work / "mutmut-survivors.log", jobs=jobs, names=names) if names else 0
    )
    wall = time.monotonic() - clock
    if status != 0:
        tail = (work / "mutmut-survivors.log").read_bytes()[-3000:].decode("utf-8", "replace")
        raise SystemExit(f"mutants: mutmut failed in {work} (exit status {status}):\n{tail}")
    merged = [
        carried_over(old, module_results(work, old["file"], staged_path(old["file"])))
        for old in previous["modules"]
    ]
    results = {
        **{key: value for key, value in previous.items() if key != "full_run"},
        "revision": git_revision(),
        "started": started.strftime("%Y-%m-%d %H:%M UTC"),
        "wall_seconds": round(wall),
        "jobs": jobs,
        "tests": list(group.tests),
        "ignored_tests": [*group.ignore, *group.deselect],
        "missing_modules": missing,
        "note": f"the {len(names)} mutants left undetected by the whole run at {revision} re-tested "
        "against these tests; the other verdicts are that run's",
        "full_run": {key: base[key] for key in ("revision", "started", "wall_seconds", "jobs")},
        "modules": merged,
    }
    previous_path.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return previous_path


def carried_over(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """A module's verdicts after re-testing its survivors: the old counts less the re-tested
    mutants' old verdicts plus their new ones (only they have verdicts in ``new``)."""
    counts = dict(old["counts"])
    for item in old["not_detected"]:
        counts[item["status"]] -= 1
    for status, count in new["counts"].items():
        if status != "not checked":
            counts[status] = counts.get(status, 0) + count
    return {
        "file": old["file"],
        "counts": {status: count for status, count in counts.items() if count},
        "not_detected": new["not_detected"],
    }


def modules_changed_since(revision: str, modules: list[str]) -> list[str]:
    """The modules whose text differs from ``revision``'s (in the working tree)."""
    result = subprocess.run(
        ["git", "diff", "--name-only", revision, "--", *modules], cwd=ROOT, capture_output=True, text=True
    )
    if result.returncode != 0:
        return [f"git diff failed: {result.stderr.strip()}"]
    return result.stdout.split()


# How many times its tests' recorded time (plus a second) a mutant may run when timeouts are
# re-checked (mutmut's own is 15).
RECHECK_TIMEOUT_MULTIPLIER = 100


def recheck_timeouts(work: Path, modules: list[str], mutmut: Path, env: dict[str, str]) -> int:
    """Run the mutants that timed out once more, one at a time, with a far longer limit.

    mutmut counts a mutant as detected when its tests run over 15 times their recorded wall time
    (plus a second). A niced run on a machine busy with other work can starve a mutant that
    changes nothing that long, and the score would count it. One at a time, in a fresh process and
    with RECHECK_TIMEOUT_MULTIPLIER, such a mutant finishes and gets its true verdict; one that
    really loops times out again.
    """
    names = [name for module in modules for name in survivors(work, staged_path(module), "timeout")]
    if not names:
        return 0
    print(f"mutants: the {len(names)} that timed out again, one at a time, with a longer limit")
    pyproject = work / "pyproject.toml"
    before = pyproject.read_text(encoding="utf-8")
    isolation = "" if "process_isolation" in before else 'process_isolation = "forkserver"\n'
    pyproject.write_text(
        before + isolation + f"timeout_multiplier = {RECHECK_TIMEOUT_MULTIPLIER}\n", encoding="utf-8"
    )
    try:
        return run_mutmut(mutmut, work, env, work / "mutmut-timeouts.log", jobs=1, names=names)
    finally:
        pyproject.write_text(before, encoding="utf-8")


def collect_group(group: Group, *, jobs: int, wall: int, note: str) -> Path:
    """The results of a group's stage as mutmut left it, without running anything."""
    modules, missing = resolve_modules(group)
    work = WORK / group.name
    started = datetime.datetime.fromtimestamp((work / "src").stat().st_mtime, datetime.timezone.utc)
    return write_results(group, modules, missing, work, started=started, wall=wall, jobs=jobs, note=note)


def write_results(
    group: Group,
    modules: list[str],
    missing: list[str],
    work: Path,
    *,
    started: datetime.datetime,
    wall: float,
    jobs: int,
    note: str = "",
) -> Path:
    """mutation/results/<group>.json: the counts per module and every mutant not killed."""
    results = {
        "group": group.name,
        "description": group.description,
        "revision": git_revision(),
        "started": started.strftime("%Y-%m-%d %H:%M UTC"),
        "wall_seconds": round(wall),
        "jobs": jobs,
        "mutmut": metadata.version("mutmut"),
        "python": sys.version.split()[0],
        "tests": list(group.tests),
        "ignored_tests": [*group.ignore, *group.deselect],
        "missing_modules": missing,
        "note": note,
        "modules": [module_results(work, module, staged_path(module)) for module in modules],
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{group.name}.json"
    path.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path

"""Reading what mutmut left in a staged group: the verdict of every mutant of a module (its
``.meta`` file) and, for each mutant not killed, where it is and what it changed.

mutmut keeps each mutated module as one file holding, per function, the original
(``x_name__mutmut_orig``, or ``xǁClassǁname__mutmut_orig`` for a method) and every mutant
(``..._mutmut_7``). A mutant's change is the difference between the two functions; its line in
the repository is the original function's line plus the offset of the first changed line.
"""

from __future__ import annotations

import ast
import difflib
import json
from pathlib import Path
from typing import Any

CLASS_SEPARATOR = "ǁ"
MUTANT_MARK = "__mutmut_"

# mutmut's exit codes of a mutant's test run (mutmut/stats.py of the pinned version).
STATUS_BY_EXIT_CODE: dict[int | None, str] = {
    1: "killed",
    3: "killed",
    0: "survived",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    35: "suspicious",
    36: "timeout",
    37: "caught by type check",
    24: "timeout",
    -24: "timeout",
    152: "timeout",
    255: "timeout",
    -11: "segfault",
    -9: "segfault",
    2: "interrupted",
    None: "not checked",
}
# Verdicts that count as the tests noticing the mutant.
DETECTED = ("killed", "timeout", "segfault", "caught by type check")


def status_of(exit_code: int | None) -> str:
    return STATUS_BY_EXIT_CODE.get(exit_code, "suspicious")


def split_key(key: str) -> tuple[str, str, str]:
    """``mcpbind.a.b.xǁCǁf__mutmut_3`` -> (module ``mcpbind.a.b``, qualified name ``C.f``, the
    mangled function name of its variants ``xǁCǁf``)."""
    module, _, name = key.rpartition(".")
    mangled = name.partition(MUTANT_MARK)[0]
    if mangled.startswith("x" + CLASS_SEPARATOR):
        _, class_name, function = mangled.split(CLASS_SEPARATOR, 2)
        return module, f"{class_name}.{function}", mangled
    return module, mangled.removeprefix("x_"), mangled


def functions_by_name(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function of a mutated module (module level or in a class), by name."""
    return {
        node.name: node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def definitions(tree: ast.Module) -> dict[str, int]:
    """The line of each function and method of an original module, by qualified name (``C.f``)."""
    found: dict[str, int] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.setdefault(prefix + node.name, node.lineno)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{node.name}.")

    visit(tree.body, "")
    return found


def one_line(removed: list[str], added: list[str]) -> str:
    """A change as one line: ``old → new`` (lines joined by `` / ``)."""
    old = " / ".join(line.strip() for line in removed)
    new = " / ".join(line.strip() for line in added)
    return f"{old} → {new}"


def change(original: str, mutant: str) -> tuple[int, str]:
    """The offset (in lines, from the ``def``) of the first changed line and the change, one line."""
    old_lines, new_lines = original.splitlines(), mutant.splitlines()
    removed: list[str] = []
    added: list[str] = []
    first: int | None = None
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag == "equal":
            continue
        if first is None:
            first = old_start
        removed += old_lines[old_start:old_end]
        added += new_lines[new_start:new_end]
    return (first or 0), one_line(removed, added)


def survivors(work: Path, staged: str, status: str = "survived") -> list[str]:
    """The mutants of a module that survived (its tests passed on them), or had another verdict."""
    meta_path = work / "mutants" / f"{staged}.meta"
    if not meta_path.exists():
        return []
    exit_codes: dict[str, int | None] = json.loads(meta_path.read_text(encoding="utf-8"))["exit_code_by_key"]
    return [key for key, code in exit_codes.items() if status_of(code) == status]


def module_results(work: Path, module: str, staged: str) -> dict[str, Any]:
    """The verdicts of one module's mutants: counts by verdict and the mutants not detected."""
    meta_path = work / "mutants" / f"{staged}.meta"
    if not meta_path.exists():
        return {"file": module, "counts": {}, "not_detected": []}
    exit_codes: dict[str, int | None] = json.loads(meta_path.read_text(encoding="utf-8"))["exit_code_by_key"]
    counts: dict[str, int] = {}
    for code in exit_codes.values():
        counts[status_of(code)] = counts.get(status_of(code), 0) + 1

    mutated_source = (work / "mutants" / staged).read_text(encoding="utf-8")
    mutated = functions_by_name(ast.parse(mutated_source))
    mutated_lines = mutated_source.splitlines()

    def text(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
        # From the ``def`` line (not the decorators) to the end; the same indentation for both.
        return "\n".join(mutated_lines[node.lineno - 1 : node.end_lineno])

    lines = definitions(ast.parse((work / staged).read_text(encoding="utf-8")))
    not_detected: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for key in sorted(exit_codes, key=_natural):
        status = status_of(exit_codes[key])
        if status in DETECTED or status == "not checked":
            continue
        module_name, qualified, mangled = split_key(key)
        name = key.rpartition(".")[2]
        original_node, mutant_node = mutated.get(f"{mangled}{MUTANT_MARK}orig"), mutated.get(name)
        offset, diff = 0, "(the mutant's function was not found)"
        if original_node is not None and mutant_node is not None:
            original, mutant = text(original_node), text(mutant_node)
            offset, diff = change(original.replace(original_node.name, name, 1), mutant)
        identity = f"{module_name}:{qualified}: {diff}"
        seen[identity] = seen.get(identity, 0) + 1
        if seen[identity] > 1:
            identity += f" #{seen[identity]}"
        not_detected.append(
            {
                "mutant": key,
                "status": status,
                "line": lines.get(qualified, 0) + offset,
                "function": qualified,
                "diff": diff,
                "identity": identity,
            }
        )
    return {"file": module, "counts": counts, "not_detected": not_detected}


def _natural(key: str) -> tuple[str, int]:
    """Mutants of a function in their order (``..._mutmut_2`` before ``..._mutmut_10``)."""
    stem, _, number = key.rpartition(MUTANT_MARK)
    return stem, int(number) if number.isdigit() else -1

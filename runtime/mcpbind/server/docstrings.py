"""Parameter descriptions from docstrings, in the three common styles.

Google::

    Args:
        city: The city's name.
        days (int): How many days ahead,
            at most 7.

NumPy::

    Parameters
    ----------
    city : str
        The city's name.

Sphinx::

    :param city: The city's name.
    :type city: str

:func:`parse_docstring` returns the description of each parameter and the rest of the text
(summary, body and other sections such as ``Returns``) without the parameter sections. A
parameter's description lines are joined with spaces; a blank line inside one starts a new
paragraph.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["Docstring", "parse_docstring"]

_PARAMETER_SECTIONS = (
    "args",
    "arguments",
    "params",
    "parameters",
    "keyword args",
    "keyword arguments",
    "other parameters",
    "other params",
)
_GOOGLE_HEADER = re.compile(rf"(?i)({'|'.join(_PARAMETER_SECTIONS)})\s*:")
_GOOGLE_ENTRY = re.compile(r"\*{0,2}([A-Za-z_]\w*)\s*(?:\([^:]*?\))?\s*:(?:\s+(.*)|\s*$)")
_NUMPY_RULE = re.compile(r"-{3,}")
_NUMPY_ENTRY = re.compile(r"(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?::.*)?")
_SPHINX_PARAM = re.compile(
    r":(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*?\s)?\*{0,2}([A-Za-z_]\w*)\s*:(?:\s+(.*)|\s*$)"
)
_SPHINX_TYPE = re.compile(r":type\s+\*{0,2}[A-Za-z_]\w*\s*:.*")


@dataclass(frozen=True)
class Docstring:
    description: str
    """The docstring without its parameter sections ("" when nothing else is left)."""
    parameters: dict[str, str] = field(default_factory=dict)
    """Each documented parameter's description, by name (``*`` and ``**`` dropped)."""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


class _Entry:
    """Lines of one parameter's description: paragraphs of stripped lines."""

    def __init__(self, first: str | None) -> None:
        self.paragraphs: list[list[str]] = [[first.strip()]] if first and first.strip() else [[]]

    def add(self, line: str) -> None:
        if line.strip():
            self.paragraphs[-1].append(line.strip())
        elif self.paragraphs[-1]:
            self.paragraphs.append([])

    def text(self) -> str:
        return "\n\n".join(" ".join(lines) for lines in self.paragraphs if lines)


def parse_docstring(doc: str | None) -> Docstring:
    """Split ``doc`` (raw or already cleaned) into its description and parameter descriptions."""
    if not doc:
        return Docstring("")
    lines = inspect.cleandoc(doc).splitlines()
    kept: list[str] = []
    entries: dict[str, _Entry] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if stripped.lower() in _PARAMETER_SECTIONS and _NUMPY_RULE.fullmatch(following):
            i = _numpy_section(lines, i, entries)
        elif _GOOGLE_HEADER.fullmatch(stripped):
            i = _google_section(lines, i, entries)
        elif _SPHINX_PARAM.fullmatch(stripped) or _SPHINX_TYPE.fullmatch(stripped):
            i = _sphinx_field(lines, i, entries)
        else:
            kept.append(line)
            i += 1
    description = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    parameters = {name: entry.text() for name, entry in entries.items() if entry.text()}
    return Docstring(description, parameters)


def _google_section(lines: list[str], start: int, entries: dict[str, _Entry]) -> int:
    header_indent = _indent(lines[start])
    entry_indent: int | None = None
    current: _Entry | None = None
    i = start + 1
    while i < len(lines):
        line = lines[i]
        if line.strip() and _indent(line) <= header_indent:
            break
        if line.strip() and entry_indent is None:
            entry_indent = _indent(line)
        match = _GOOGLE_ENTRY.fullmatch(line.strip()) if line.strip() else None
        if match and _indent(line) == entry_indent:
            current = entries[match[1]] = _Entry(match[2])
        elif current is not None:
            current.add(line)
        i += 1
    return i


def _numpy_section(lines: list[str], start: int, entries: dict[str, _Entry]) -> int:
    header_indent = _indent(lines[start])
    current: list[_Entry] = []
    i = start + 2
    while i < len(lines):
        line = lines[i]
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if line.strip() and _indent(line) <= header_indent:
            if _NUMPY_RULE.fullmatch(following):
                break  # the next section
            match = _NUMPY_ENTRY.fullmatch(line.strip())
            if match is None:
                break
            names = [name.strip().lstrip("*") for name in match[1].split(",")]
            current = [entries.setdefault(name, _Entry(None)) for name in names]
        else:
            for entry in current:
                entry.add(line)
        i += 1
    return i


def _sphinx_field(lines: list[str], start: int, entries: dict[str, _Entry]) -> int:
    field_indent = _indent(lines[start])
    match = _SPHINX_PARAM.fullmatch(lines[start].strip())
    entry = _Entry(match[2]) if match else None
    if match and entry is not None:
        entries[match[1]] = entry
    i = start + 1
    while i < len(lines) and lines[i].strip() and _indent(lines[i]) > field_indent:
        if entry is not None:
            entry.add(lines[i])
        i += 1
    return i

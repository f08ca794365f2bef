"""The parsed form of an RFC 6570 URI template: operators, variable specs and expressions."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OPERATORS", "Expression", "Operator", "VarSpec"]


@dataclass(frozen=True, slots=True)
class Operator:
    char: str
    first: str
    sep: str
    named: bool
    ifemp: str
    allow_reserved: bool


OPERATORS: dict[str, Operator] = {
    "": Operator("", "", ",", False, "", False),
    "+": Operator("+", "", ",", False, "", True),
    "#": Operator("#", "#", ",", False, "", True),
    ".": Operator(".", ".", ".", False, "", False),
    "/": Operator("/", "/", "/", False, "", False),
    ";": Operator(";", ";", ";", True, "", False),
    "?": Operator("?", "?", "&", True, "=", False),
    "&": Operator("&", "&", "&", True, "=", False),
}


@dataclass(frozen=True, slots=True)
class VarSpec:
    name: str
    prefix: int | None
    explode: bool


@dataclass(frozen=True, slots=True)
class Expression:
    op: Operator
    varspecs: tuple[VarSpec, ...]
    text: str  # as written in the template, braces included (for messages)

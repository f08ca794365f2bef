"""Decoding policy for the parts of the MCP schemas that msgspec cannot decode on its own.

The generated bindings lean on three things defined here:

* :class:`UnknownContent`: a content block whose ``type`` the negotiated schema does not know
  (a newer peer's block kind). It is kept whole, as the mapping that was received, and encodes
  back to exactly that mapping. A message that carries one still decodes.
* :func:`resolved_union`: unions whose members carry no shared constant discriminator (for
  example ``TextResourceContents | BlobResourceContents``) are decoded by a deliberate
  policy: every member that validates is a candidate, and the one whose fields cover the most
  keys of the received object wins; ties go to the member listed first in the schema.
* :func:`decode` / :func:`convert`: typed decoding with both of the above. The fast path is a
  single msgspec decode; only a message that holds an unknown content type takes the slow path.

Decode the generated types with :func:`decode` (or :func:`convert`, or a :class:`TypedDecoder`),
not with plain msgspec: ``msgspec.json.decode(data, type=EmbeddedResource)`` fails on every
untagged union inside (msgspec cannot decide one by itself; its error names the union and says
to use this module), where ``decode(data, EmbeddedResource)`` decodes it and keeps content
blocks of unknown types too. A msgspec decoder of your own works given
``dec_hook=mcpbind.protocol.unions.dec_hook`` (without the unknown content blocks). Encoding needs
nothing: ``msgspec.json.encode`` takes the structs as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any, ClassVar, Generic, Literal, TypeVar, cast, get_args, get_origin, overload

import msgspec
import msgspec.inspect

__all__ = [
    "ResolvedUnion",
    "TypedDecoder",
    "UnknownContent",
    "convert",
    "dec_hook",
    "decode",
    "decoder_for",
    "resolved_union",
]

T = TypeVar("T")


class UnknownContent(dict[str, Any]):
    """A content block of a ``type`` this schema version does not define.

    It holds every key that was received and encodes back to the same object, so a proxy or a
    client that only displays known blocks loses nothing.
    """

    __slots__ = ()

    @property
    def type(self) -> str:
        value = self.get("type")
        return value if isinstance(value, str) else ""

    def __repr__(self) -> str:
        return f"UnknownContent({dict.__repr__(self)})"


class _ResolvedUnionMeta(type):
    # msgspec checks that a dec_hook returned an instance of the declared type; a value of
    # any member counts as an instance of the union.
    def __instancecheck__(cls, obj: object) -> bool:
        plan: _Plan | None = cls._plan_cache  # type: ignore[attr-defined]
        if plan is None:
            plan = cls._plan()  # type: ignore[attr-defined]
        if isinstance(obj, plan.classes):
            return True
        return any(_is_member(obj, member) for member in plan.others)


def _is_member(obj: object, member: Any) -> bool:
    if member is None:
        return obj is None
    origin = get_origin(member) or member
    if isinstance(origin, type):
        return isinstance(obj, origin)
    if origin is Literal:
        return obj in get_args(member)
    return any(_is_member(obj, arg) for arg in get_args(member))


class _Candidate:
    """A struct member of a resolved union, with the keys it needs and the keys it knows."""

    __slots__ = ("fields", "member", "name", "required")

    def __init__(self, member: type[msgspec.Struct]) -> None:
        info = msgspec.inspect.type_info(member)
        assert isinstance(info, msgspec.inspect.StructType)
        self.member = member
        self.name = member.__name__
        self.required = frozenset(f.encode_name for f in info.fields if f.required)
        self.fields = frozenset(f.encode_name for f in info.fields) | ({info.tag_field} - {None})


class _Plan:
    __slots__ = ("candidates", "classes", "others", "signatures")

    def __init__(self, members: tuple[Any, ...], discriminated: bool) -> None:
        structs = [m for m in members if isinstance(m, type) and issubclass(m, msgspec.Struct)]
        self.candidates = [_Candidate(m) for m in structs]
        self.classes = tuple(structs)
        self.others = tuple(m for m in members if m not in structs)
        # Fast path: when each struct member requires a key no other member knows
        # (``text`` / ``blob``), that key alone says which member to try.
        self.signatures: list[tuple[str, type[msgspec.Struct]]] = []
        if not discriminated and not self.others:
            for candidate in self.candidates:
                known_elsewhere = frozenset().union(
                    *(c.fields for c in self.candidates if c is not candidate)
                )
                own = sorted(candidate.required - known_elsewhere)
                if not own:
                    self.signatures = []
                    break
                self.signatures.append((own[0], candidate.member))


class ResolvedUnion(metaclass=_ResolvedUnionMeta):
    """Runtime stand-in for an untagged union; never instantiated.

    Generated modules declare such a union as a plain ``A | B`` for type checkers and as a
    subclass of this class for msgspec, which hands the decoded JSON value to :func:`dec_hook`.
    """

    union_name: ClassVar[str]
    discriminator: ClassVar[tuple[str, dict[str, str]] | None] = None
    _members_thunk: ClassVar[Callable[[], tuple[Any, ...]]]
    _members: ClassVar[tuple[Any, ...] | None] = None
    _plan_cache: ClassVar[_Plan | None] = None

    def __init__(self) -> None:  # pragma: no cover - guard only
        raise TypeError(f"{self.union_name} is a union marker, not a value type")

    @classmethod
    def members(cls) -> tuple[Any, ...]:
        if cls._members is None:
            cls._members = cls._members_thunk()
        return cls._members

    @classmethod
    def _plan(cls) -> _Plan:
        if cls._plan_cache is None:
            cls._plan_cache = _Plan(cls.members(), cls.discriminator is not None)
        return cls._plan_cache

    @classmethod
    def resolve(cls, obj: Any) -> Any:
        """The member value for decoded JSON ``obj``; ``ValueError`` when no member fits.

        Only members whose required keys are all present are tried, the ones that know most
        of the object's keys first (declared order breaks ties); the first that validates wins.
        """
        plan = cls._plan_cache or cls._plan()
        if isinstance(obj, dict):
            for key, member in plan.signatures:
                if key in obj:
                    try:
                        return msgspec.convert(obj, member, dec_hook=dec_hook)
                    except msgspec.ValidationError:
                        break  # the full search below reports every member's reason
        failures: list[str] = []
        if isinstance(obj, dict):
            keys = obj.keys()
            candidates = [c for c in plan.candidates if keys >= c.required]
            if cls.discriminator is not None:
                key, chosen = cls.discriminator
                wanted = chosen.get(obj.get(key))  # type: ignore[arg-type]
                named = chosen.values()
                candidates = [c for c in candidates if (c.name == wanted if wanted else c.name not in named)]
            if len(candidates) > 1:
                candidates.sort(key=lambda c: len(keys & c.fields), reverse=True)
            for candidate in candidates:
                try:
                    return convert(obj, candidate.member)
                except msgspec.ValidationError as exc:
                    failures.append(f"{candidate.name}: {exc}")
            failures += [
                f"{c.name}: Object missing required field `{min(c.required - keys)}`"
                for c in plan.candidates
                if not keys >= c.required
            ]
        elif plan.candidates:  # (else the reason would be empty: "matches no member of X ()")
            failures += [f"{c.name}: Expected `object`, got `{_json_kind(obj)}`" for c in plan.candidates]
        for member in plan.others:
            try:
                return convert(obj, member)
            except msgspec.ValidationError as exc:
                failures.append(f"{_type_name(member)}: {exc}")
        raise ValueError(f"Object matches no member of {cls.union_name} ({'; '.join(failures)})")


# What plain msgspec says when it meets a union marker: the class's ``__name__`` is in its
# "Expected `...`, got `dict`", so the name tells what to use instead.
_DECODE_HINT = "an untagged union: decode with mcpbind.protocol.unions.decode, or pass dec_hook=mcpbind.protocol.unions.dec_hook"


def resolved_union(
    name: str,
    members: Callable[[], tuple[Any, ...]],
    discriminator: tuple[str, dict[str, str]] | None = None,
) -> type[ResolvedUnion]:
    """Create the runtime marker of an untagged union; ``members`` is called on first use.

    ``discriminator`` is ``(key, {value: member name})``: an object whose ``key`` holds one of
    the values is decoded as that member only; any other object as one of the other members.

    The marker's ``__qualname__`` (its ``repr``) is ``name``; its ``__name__``, which msgspec
    puts in the error of a decode without :func:`dec_hook`, adds how to decode it.
    """
    namespace = {
        "union_name": name,
        "_members_thunk": staticmethod(members),
        "discriminator": discriminator,
        "__qualname__": name,
    }
    return type(f"{name} ({_DECODE_HINT})", (ResolvedUnion,), namespace)


_JSON_KINDS: dict[type, str] = {list: "array", str: "str", bool: "bool", int: "int", float: "float"}


def _json_kind(obj: Any) -> str:
    """What a decoded JSON value is, in msgspec's words (``array``, ``str``, ``null``...)."""
    return "null" if obj is None else _JSON_KINDS.get(type(obj), type(obj).__name__)


def _type_name(tp: Any) -> str:
    if isinstance(tp, type) and issubclass(tp, ResolvedUnion):
        return tp.union_name
    return getattr(tp, "__name__", None) or repr(tp)


def dec_hook(tp: Any, obj: Any) -> Any:
    """msgspec ``dec_hook`` for generated types: resolves the untagged unions."""
    if isinstance(tp, type) and issubclass(tp, ResolvedUnion):
        return tp.resolve(obj)
    raise NotImplementedError(f"mcpbind cannot decode values of type {tp!r}")


@lru_cache(maxsize=1024)
def decoder_for(tp: Any) -> msgspec.json.Decoder[Any]:
    """A cached JSON decoder for ``tp`` with the generated types' hook installed."""
    return msgspec.json.Decoder(tp, dec_hook=dec_hook)


@overload
def decode(data: bytes | bytearray | memoryview | str, tp: type[T]) -> T: ...
@overload
def decode(data: bytes | bytearray | memoryview | str, tp: Any) -> Any: ...
def decode(data: bytes | bytearray | memoryview | str, tp: Any) -> Any:
    """Decode JSON ``data`` into ``tp``; unknown content types become :class:`UnknownContent`."""
    try:
        return decoder_for(tp).decode(data)
    except msgspec.ValidationError as exc:
        return _recover(data, tp, exc)


class TypedDecoder(Generic[T]):
    """:func:`decode` for one type, with its msgspec decoder built on first use and kept."""

    __slots__ = ("_decoder", "type")

    def __init__(self, tp: Any) -> None:
        self.type = tp
        self._decoder: msgspec.json.Decoder[Any] | None = None

    @property
    def msgspec_decoder(self) -> msgspec.json.Decoder[Any]:
        """The msgspec decoder alone: the fast path, without the unknown-content recovery."""
        decoder = self._decoder
        if decoder is None:
            decoder = self._decoder = decoder_for(self.type)
        return decoder

    def decode(self, data: bytes | bytearray | memoryview | str) -> T:
        try:
            value: T = self.msgspec_decoder.decode(data)
        except msgspec.ValidationError as exc:
            value = _recover(data, self.type, exc)
        return value

    def recover(self, data: bytes | bytearray | memoryview | str, error: msgspec.ValidationError) -> T:
        """After ``msgspec_decoder`` failed with ``error``: keep unknown content blocks, or re-raise."""
        value: T = _recover(data, self.type, error)
        return value


def _recover(data: bytes | bytearray | memoryview | str, tp: Any, exc: msgspec.ValidationError) -> Any:
    """The slow path, taken only when an unknown content type made the fast decode fail."""
    if _unknown_tag_path(exc) is None:
        raise exc
    return _convert_patched(msgspec.json.decode(data), tp, exc)


@overload
def convert(obj: Any, tp: type[T]) -> T: ...
@overload
def convert(obj: Any, tp: Any) -> Any: ...
def convert(obj: Any, tp: Any) -> Any:
    """Like :func:`msgspec.convert` from decoded JSON builtins, with the same policy as :func:`decode`."""
    try:
        return msgspec.convert(obj, tp, dec_hook=dec_hook)
    except msgspec.ValidationError as exc:
        if _unknown_tag_path(exc) is None:
            raise
        return _convert_patched(_copy_json(obj), tp, exc)


# Unknown content types -------------------------------------------------------------------

# Every content-block union of every MCP version has a "text" member, so an unknown block is
# swapped for this stand-in while the rest of the message is validated, then put back as an
# UnknownContent. A union without a "text" member (a reference, a schema kind) rejects the
# stand-in at the same place and the original error stands.
_STAND_IN: dict[str, Any] = {"type": "text", "text": ""}
_MAX_UNKNOWN_BLOCKS = 10_000

_TAG_ERROR = re.compile(r"^Invalid value '.*' - at `\$(?P<path>.*)\.type`$", re.DOTALL)
_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+)\]|(\[\.\.\.\])")


def _unknown_tag_path(exc: msgspec.ValidationError) -> list[str | int] | None:
    match = _TAG_ERROR.match(str(exc))
    if match is None:
        return None
    raw = match.group("path")
    segments: list[str | int] = []
    pos = 0
    while pos < len(raw):
        seg = _SEGMENT.match(raw, pos)
        if seg is None or seg.group(3) is not None:
            return None  # a dict key: msgspec does not say which, so it cannot be patched
        segments.append(seg.group(1) if seg.group(1) is not None else int(seg.group(2)))
        pos = seg.end()
    if not segments:
        return None  # the top-level object itself has the wrong tag: a real error
    return segments


def _copy_json(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _copy_json(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_copy_json(v) for v in obj]
    return obj


def _convert_patched(obj: Any, tp: Any, first: msgspec.ValidationError) -> Any:
    patched: list[tuple[list[str | int], dict[str, Any]]] = []
    exc = first
    for _ in range(_MAX_UNKNOWN_BLOCKS):
        path = _unknown_tag_path(exc)
        if path is None or (patched and patched[-1][0] == path):
            raise first
        parent = obj
        for seg in path[:-1]:
            parent = parent[seg]
        original = parent[path[-1]]
        if not isinstance(original, dict):
            raise first
        parent[path[-1]] = dict(_STAND_IN)
        patched.append((path, original))
        try:
            result = msgspec.convert(obj, tp, dec_hook=dec_hook)
        except msgspec.ValidationError as again:
            exc = again
            continue
        for block_path, block in patched:
            _put_back(result, block_path, UnknownContent(block))
        return result
    raise first


def _put_back(result: Any, path: list[str | int], value: UnknownContent) -> None:
    target = result
    for seg in path[:-1]:
        target = _step(target, seg)
    last = path[-1]
    if isinstance(last, int):
        target[last] = value
    else:
        setattr(target, _attr_name(cast(Any, type(target)), last), value)


def _step(target: Any, seg: str | int) -> Any:
    if isinstance(seg, int):
        return target[seg]
    if isinstance(target, dict):
        return target[seg]
    return getattr(target, _attr_name(cast(Any, type(target)), seg))


@cache
def _attr_name(cls: Any, wire: str) -> str:
    encode_fields: tuple[str, ...] = getattr(cls, "__struct_encode_fields__", ())
    fields: tuple[str, ...] = getattr(cls, "__struct_fields__", ())
    for enc, attr in zip(encode_fields, fields, strict=True):
        if enc == wire:
            return attr
    raise KeyError(wire)

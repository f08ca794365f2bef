"""Decode + encode of MCP messages: mcpbind side by side with orjson and the official SDK's types.

Two scenarios, each a full JSON-RPC message on the wire:

* ``tools/call request``: a request whose params carry a tool name and an arguments object;
* ``CallToolResult response``: a response carrying six content blocks (text, a base64 image,
  resource links, an embedded text resource, annotations), ``structuredContent`` and ``_meta``.

Each implementation turns the message bytes into its typed (or untyped) form and back into
bytes. Before anything is timed, every round trip is checked to give back JSON equal to the
input (same members, same values, same JSON types), so only working code is measured.

Run ``nox -s bench``, or in a dev checkout
``PYTHONPATH=runtime:generated python bench/codec.py [--rounds N] [--quick]``.
"""

from __future__ import annotations

import argparse
import base64
import gc
import json
import os
import platform
import statistics
import sys
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import msgspec
import orjson
from mcp_types import CallToolRequestParams as PydCallToolRequestParams
from mcp_types import CallToolResult as PydCallToolResult
from mcp_types import JSONRPCRequest, JSONRPCResponse, jsonrpc_message_adapter

from mcpbind.protocol.unions import decode
from mcpbind.protocol.wire import Codec, Request, Response, TypedRequest
from mcpbind.schema.v2025_06_18 import CallToolRequestParams, CallToolResult, methods

VERSION = "2025-06-18"
RoundTrip = Callable[[bytes], bytes]

# -- the messages --------------------------------------------------------------------------------

REQUEST_PARAMS: dict[str, Any] = {
    "name": "search_issues",
    "arguments": {
        "repository": "modelcontextprotocol/python-sdk",
        "query": "codec performance",
        "limit": 20,
        "include_closed": False,
        "labels": ["performance", "wire"],
    },
    "_meta": {"progressToken": "call-7"},
}

# 768 bytes of image data: 1024 characters of base64.
_IMAGE = base64.b64encode(bytes(range(256)) * 3).decode("ascii")

RESULT: dict[str, Any] = {
    "content": [
        {"type": "text", "text": "Found 3 issues matching 'codec performance'."},
        {"type": "image", "data": _IMAGE, "mimeType": "image/png"},
        {
            "type": "resource_link",
            "uri": "https://github.com/modelcontextprotocol/python-sdk/issues/1001",
            "name": "issue-1001",
            "title": "Slow JSON decoding of large tool results",
            "description": "Decoding a CallToolResult with many blocks is slow.",
            "mimeType": "text/html",
            "size": 48213,
        },
        {
            "type": "resource",
            "resource": {
                "uri": "file:///repo/src/codec.py",
                "mimeType": "text/x-python",
                "text": "def decode(data: bytes) -> Message:\n    return _DECODER.decode(data)\n",
            },
            "annotations": {"audience": ["assistant"], "priority": 0.5},
        },
        {
            "type": "text",
            "text": "The second issue is a duplicate of the first.",
            "annotations": {"audience": ["user", "assistant"], "priority": 0.25},
        },
        {
            "type": "resource_link",
            "uri": "https://github.com/modelcontextprotocol/python-sdk/issues/1002",
            "name": "issue-1002",
        },
    ],
    "structuredContent": {
        "total": 3,
        "issues": [
            {"number": 1001, "state": "open", "score": 0.93},
            {"number": 1002, "state": "closed", "score": 0.71},
            {"number": 1003, "state": "open", "score": 0.42},
        ],
    },
    "_meta": {"requestDuration": 12.5, "cached": False},
}


def _compact(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass(frozen=True)
class Scenario:
    name: str
    is_request: bool  # which of an implementation's two round trips applies
    message: bytes  # the full JSON-RPC message
    body: bytes  # the params / result member alone


SCENARIOS = (
    Scenario(
        "tools/call request",
        True,
        _compact({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": REQUEST_PARAMS}),
        _compact(REQUEST_PARAMS),
    ),
    Scenario(
        "CallToolResult response",
        False,
        _compact({"jsonrpc": "2.0", "id": 7, "result": RESULT}),
        _compact(RESULT),
    ),
)

# -- the implementations -------------------------------------------------------------------------

_SERVER = Codec.for_version(VERSION, role="server")
_CLIENT = Codec.for_version(VERSION, role="client")


def mcpbind_request(data: bytes) -> bytes:
    """``Codec.decode_typed`` (one msgspec pass into the method's params), encode back."""
    message = _SERVER.decode_typed(data)
    assert isinstance(message, TypedRequest)
    params: CallToolRequestParams = message.params
    return Codec.encode_request(message.id, message.method, params)


def mcpbind_two_stage_request(data: bytes) -> bytes:
    """Envelope decode (params kept raw), typed params decode, encode back into a request."""
    message = _SERVER.decode(data)
    assert isinstance(message, Request)
    params: CallToolRequestParams = _SERVER.request_params(message)
    return Codec.encode_request(message.id, message.method, params)


def mcpbind_response(data: bytes) -> bytes:
    """Envelope decode, typed result decode, encode of the struct back into a response."""
    message = _CLIENT.decode(data)
    assert isinstance(message, Response)
    result: CallToolResult = _CLIENT.result(methods.TOOLS_CALL, message)
    return Codec.encode_result(message.id, result)


def bare_request(data: bytes) -> bytes:
    return msgspec.json.encode(decode(data, CallToolRequestParams))


def bare_response(data: bytes) -> bytes:
    return msgspec.json.encode(decode(data, CallToolResult))


def orjson_roundtrip(data: bytes) -> bytes:
    return orjson.dumps(orjson.loads(data))


# The official SDK's idiom: validate the envelope with ``jsonrpc_message_adapter``, validate the
# params / result dict with the method's model, and on the way out dump the model to a dict that
# goes into a new envelope, which is dumped to JSON. The inner dump uses ``exclude_unset`` (not
# the SDK's ``exclude_none``): a received ``CallToolResult`` would otherwise gain ``isError`` and
# ``resultType`` members it did not have, and the round trip would not give back its input.


def pydantic_request(data: bytes) -> bytes:
    message = jsonrpc_message_adapter.validate_json(data)
    assert isinstance(message, JSONRPCRequest)
    params = PydCallToolRequestParams.model_validate(message.params)
    out = JSONRPCRequest(
        jsonrpc="2.0",
        id=message.id,
        method=message.method,
        params=params.model_dump(by_alias=True, mode="json", exclude_unset=True),
    )
    return out.model_dump_json(by_alias=True, exclude_none=True).encode()


def pydantic_response(data: bytes) -> bytes:
    message = jsonrpc_message_adapter.validate_json(data)
    assert isinstance(message, JSONRPCResponse)
    result = PydCallToolResult.model_validate(message.result)
    out = JSONRPCResponse(
        jsonrpc="2.0",
        id=message.id,
        result=result.model_dump(by_alias=True, mode="json", exclude_unset=True),
    )
    return out.model_dump_json(by_alias=True, exclude_none=True).encode()


def pydantic_bare_request(data: bytes) -> bytes:
    return (
        PydCallToolRequestParams.model_validate_json(data)
        .model_dump_json(by_alias=True, exclude_unset=True)
        .encode()
    )


def pydantic_bare_response(data: bytes) -> bytes:
    return (
        PydCallToolResult.model_validate_json(data)
        .model_dump_json(by_alias=True, exclude_unset=True)
        .encode()
    )


@dataclass(frozen=True)
class Impl:
    key: str
    label: str
    full_message: bool  # True: takes the whole message; False: the params / result member
    request: RoundTrip
    response: RoundTrip


MCPBIND = "mcpbind"
MCPBIND_TWO_STAGE = "mcpbind-two-stage"
MCPBIND_BARE = "mcpbind-bare"
ORJSON = "orjson"
PYDANTIC = "pydantic"
PYDANTIC_BARE = "pydantic-bare"

IMPLS = (
    Impl(MCPBIND, "mcpbind (full message, typed)", True, mcpbind_request, mcpbind_response),
    Impl(
        MCPBIND_TWO_STAGE,
        "mcpbind two-stage (raw params, then typed)",
        True,
        mcpbind_two_stage_request,
        mcpbind_response,
    ),
    Impl(MCPBIND_BARE, "mcpbind bare struct (body only)", False, bare_request, bare_response),
    Impl(ORJSON, "orjson untyped (full message)", True, orjson_roundtrip, orjson_roundtrip),
    Impl(PYDANTIC, "mcp-types pydantic (full message, typed)", True, pydantic_request, pydantic_response),
    Impl(
        PYDANTIC_BARE,
        "mcp-types pydantic bare model (body only)",
        False,
        pydantic_bare_request,
        pydantic_bare_response,
    ),
)

# -- checking ------------------------------------------------------------------------------------


def same_json(a: Any, b: Any, path: str = "$") -> None:
    """Raise AssertionError unless ``a`` and ``b`` are the same JSON value (types included)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            raise AssertionError(f"{path}: members {sorted(a)} != {sorted(b)}")
        for key in a:
            same_json(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            raise AssertionError(f"{path}: {len(a)} items != {len(b)} items")
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same_json(x, y, f"{path}[{i}]")
    elif type(a) is not type(b) or a != b:
        raise AssertionError(f"{path}: {a!r} != {b!r}")


def check(impl: Impl, scenario: Scenario, fn: RoundTrip) -> bytes:
    data = scenario.message if impl.full_message else scenario.body
    out = fn(data)
    try:
        same_json(json.loads(out), json.loads(data))
    except AssertionError as exc:
        raise AssertionError(f"{impl.key} / {scenario.name}: round trip differs from input: {exc}") from None
    return data


# -- timing --------------------------------------------------------------------------------------


@dataclass
class Result:
    impl: Impl
    scenario: Scenario
    size: int
    times: list[float]  # seconds per op, one per round

    @property
    def median_us(self) -> float:
        return statistics.median(self.times) * 1e6


def calibrate(timer: timeit.Timer, target: float) -> int:
    """The smallest loop count of the form 1, 2 or 5 times a power of ten that runs ``target`` seconds."""
    number = 1
    while True:
        for factor in (1, 2, 5):
            loops = number * factor
            if timer.timeit(loops) >= target:
                return loops
        number *= 10


def run(rounds: int, target: float) -> list[Result]:
    results: list[Result] = []
    for scenario in SCENARIOS:
        print(f"timing {scenario.name} ...", file=sys.stderr, flush=True)
        timers: list[tuple[Result, timeit.Timer, int]] = []
        for impl in IMPLS:
            fn = impl.request if scenario.is_request else impl.response
            data = check(impl, scenario, fn)
            # timeit calls fn(data) in its own loop (no lambda frame) with the GC disabled.
            timer = timeit.Timer("fn(data)", globals={"fn": fn, "data": data})
            timer.timeit(1000)  # warm up caches (decoders, pydantic validators)
            number = calibrate(timer, target)
            timers.append((Result(impl, scenario, len(data), []), timer, number))
        # Rounds interleave the implementations so that a slow moment of the machine is shared.
        for _ in range(rounds):
            for result, timer, number in timers:
                result.times.append(timer.timeit(number) / number)
        results.extend(result for result, _, _ in timers)
    return results


# -- reporting -----------------------------------------------------------------------------------


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "dev checkout"


def environment() -> str:
    versions = ", ".join(
        f"{name} {_version(name)}" for name in ("mcpbind", "msgspec", "orjson", "pydantic", "mcp-types")
    )
    return (
        f"Python {platform.python_version()} ({platform.python_implementation()}), {platform.machine()}, "
        f"{os.cpu_count()} CPUs, {platform.platform(terse=True)}; {versions}"
    )


def ratio(results: list[Result], scenario: Scenario, num: str, den: str) -> float:
    by_key = {r.impl.key: r for r in results if r.scenario is scenario}
    return by_key[num].median_us / by_key[den].median_us


def report(results: list[Result], rounds: int) -> str:
    lines = [
        f"Median of {rounds} rounds; time per decode + encode round trip, in microseconds.",
        "",
        "| scenario | implementation | input bytes | median µs/op | min-max µs | vs orjson | vs mcpbind |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for scenario in SCENARIOS:
        rows = [r for r in results if r.scenario is scenario]
        orjson_us = next(r.median_us for r in rows if r.impl.key == ORJSON)
        mcpbind_us = next(r.median_us for r in rows if r.impl.key == MCPBIND)
        for r in rows:
            lo, hi = min(r.times) * 1e6, max(r.times) * 1e6
            lines.append(
                f"| {scenario.name} | {r.impl.label} | {r.size} | {r.median_us:.2f} | {lo:.2f}-{hi:.2f} "
                f"| {r.median_us / orjson_us:.2f}x | {r.median_us / mcpbind_us:.2f}x |"
            )
    lines += [
        "",
        "| scenario | mcpbind / orjson (goal <= 1.3x) | pydantic / mcpbind (goal >= 10x) "
        "| bare: pydantic / mcpbind |",
        "| --- | ---: | ---: | ---: |",
    ]
    for scenario in SCENARIOS:
        fast = ratio(results, scenario, MCPBIND, ORJSON)
        slow = ratio(results, scenario, PYDANTIC, MCPBIND)
        bare = ratio(results, scenario, PYDANTIC_BARE, MCPBIND_BARE)
        lines.append(
            f"| {scenario.name} | {fast:.2f}x {'met' if fast <= 1.3 else 'MISSED'} "
            f"| {slow:.1f}x {'met' if slow >= 10 else 'MISSED'} | {bare:.1f}x |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--rounds", type=int, default=None, help="timed rounds per implementation (default 7)"
    )
    parser.add_argument("--quick", action="store_true", help="3 rounds of about 0.05 s each: a smoke run")
    args = parser.parse_args(argv)
    rounds: int = args.rounds if args.rounds is not None else (3 if args.quick else 7)
    if rounds < 1:
        parser.error("--rounds must be at least 1")
    target = 0.05 if args.quick else 0.2

    print(environment(), flush=True)
    gc.collect()
    results = run(rounds, target)
    print()
    print(report(results, rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())

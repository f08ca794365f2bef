"""What `nox -s mutants` mutates, in groups run one at a time (`nox -s mutants -- uri_template`).

Each group names the modules it mutates (paths under a source root, ``runtime/`` or ``generated/``,
as they are in the repository) and the tests that judge the mutants: fast, in-process tests only
(no subprocess, no interop peer), since every mutant runs the tests that reach its function. A
module listed but missing (one another change has not created yet, or has moved) is skipped and
named in the report, so the lists can run ahead of the code.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Group:
    name: str
    # Files relative to the repository root (runtime/mcpbind/..., generated/mcpbind/...); a
    # trailing ``*.py`` takes every module of a folder.
    modules: tuple[str, ...]
    # The tests (pytest paths) whose run records which test reaches which function.
    tests: tuple[str, ...]
    # Files among them to leave out (they spawn processes).
    ignore: tuple[str, ...] = ()
    # Tests to leave out (pytest node ids): those asserting wall-clock limits, which fail under
    # mutmut's tracing on a loaded machine and stop the run at its clean pass.
    deselect: tuple[str, ...] = ()
    description: str = ""


PROTOCOL_TESTS = ("tests/protocol",)
# It runs `python -c` in a child to check which modules the protocol layer imports.
PROTOCOL_IGNORE = ("tests/protocol/test_sans_io.py",)

GROUPS: tuple[Group, ...] = (
    Group(
        name="codec",
        modules=(
            "runtime/mcpbind/protocol/wire.py",
            "runtime/mcpbind/protocol/jsonrpc.py",
            "runtime/mcpbind/protocol/salvage.py",
            "runtime/mcpbind/protocol/encode.py",
            "runtime/mcpbind/protocol/codecs.py",
            "runtime/mcpbind/protocol/envelope.py",
            "runtime/mcpbind/protocol/peek.py",
        ),
        tests=PROTOCOL_TESTS,
        ignore=PROTOCOL_IGNORE,
        description="the JSON-RPC codec: decoding and encoding messages, envelopes, peeking",
    ),
    Group(
        name="connection",
        modules=(
            "runtime/mcpbind/protocol/connection.py",
            # The version down-conversion and the may-this-side-send rules, split out of it.
            "runtime/mcpbind/protocol/down_convert.py",
            "runtime/mcpbind/protocol/send_rules.py",
        ),
        tests=PROTOCOL_TESTS,
        ignore=PROTOCOL_IGNORE,
        description="the sans-IO connection: handshake, request bookkeeping, versions",
    ),
    Group(
        name="uri_template",
        modules=("runtime/mcpbind/server/uri_template/*.py",),
        tests=(
            "tests/server/test_uri_template_parse.py",
            "tests/server/test_uri_template_expand.py",
            "tests/server/test_uri_template_match.py",
            "tests/server/test_uri_template_refused.py",
            "tests/server/test_uri_template_round_trip.py",
        ),
        deselect=("tests/server/test_uri_template_match.py::test_hostile_uris_are_matched_in_linear_time",),
        description="RFC 6570 URI templates: parsing, expansion, matching",
    ),
    Group(
        name="http_sessions",
        modules=(
            "runtime/mcpbind/transports/http/server/sessions.py",
            "runtime/mcpbind/transports/http/server/session_posts.py",
        ),
        tests=(
            "tests/transports/http/test_http_server_sessions.py",
            "tests/transports/http/test_http_server_post.py",
            "tests/transports/http/test_http_session_lifecycle.py",
            "tests/transports/http/test_http_sessions_shared_in_process.py",
            # A session bound to the principal that opened it (its owner, and its id header).
            "tests/server/auth/test_protected_requests.py::test_a_session_refuses_another_principals_token",
        ),
        # 28 s of the group's 41 s, and every mutant of a function it reaches would rerun it.
        deselect=(
            "tests/transports/http/test_http_server_sessions.py"
            "::test_thousand_sessions_opened_then_deleted_leave_nothing",
        ),
        description="the Streamable HTTP server's session table and the POSTs of sessions "
        "(the app served in-process, on loopback; two apps sharing a MemoryStore for the sharing paths)",
    ),
)

BY_NAME = {group.name: group for group in GROUPS}

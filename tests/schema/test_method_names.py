"""The names of the generated method constants, handlers and handler protocols.

One rule for every version: the words of the wire name (split at ``/``, ``_`` and camelCase),
upper-cased for the constant, lower-cased after ``on_`` for the handler; a notification keeps
its ``notifications/`` prefix, so a request and a notification never share a name.
"""

from __future__ import annotations

import anyio
import pytest

from codegen.emit import const_name, handler_name, methods_module
from codegen.model import MethodDef, SchemaModel
from codegen.pins import load_pins
from mcpbind.protocol.methods import NotificationSpec, RequestSpec
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import VERSIONS, load
from mcpbind.schema import v2025_11_25 as types
from mcpbind.schema.v2025_11_25 import stubs
from mcpbind.server.server import Server
from tests.harness import connected


def _method(wire: str, kind: str = "request") -> MethodDef:
    return MethodDef(
        method=wire,
        kind=kind,
        definition="X",
        direction="BOTH",
        params="dict[str, Any]",
        params_optional=True,
        result="EmptyResult" if kind == "request" else None,
    )


@pytest.mark.parametrize(
    ("wire", "kind", "constant", "handler"),
    [
        ("sampling/createMessage", "request", "SAMPLING_CREATE_MESSAGE", "on_sampling_create_message"),
        ("logging/setLevel", "request", "LOGGING_SET_LEVEL", "on_logging_set_level"),
        ("resources/templates/list", "request", "RESOURCES_TEMPLATES_LIST", "on_resources_templates_list"),
        ("initialize", "request", "INITIALIZE", "on_initialize"),
        ("notifications/initialized", "notification", "NOTIFICATIONS_INITIALIZED", None),
        ("notifications/message", "notification", "NOTIFICATIONS_MESSAGE", "on_notifications_message"),
        ("message", "request", "MESSAGE", "on_message"),
        ("tools/list_changed", "notification", "NOTIFICATIONS_TOOLS_LIST_CHANGED", None),
        ("getURLInfo", "request", "GET_URL_INFO", "on_get_url_info"),
    ],
)
def test_names_keep_words_and_kinds_apart(wire: str, kind: str, constant: str, handler: str | None) -> None:
    entry = _method(wire, kind)
    assert const_name(entry) == constant
    assert handler_name(entry) == (handler or "on_" + constant.lower())


def test_a_clash_of_names_fails_the_generator() -> None:
    pin = load_pins()[0]

    def model(*entries: MethodDef) -> SchemaModel:
        return SchemaModel(pin.version, {}, {}, list(entries), False, [])

    methods_module(pin, model(_method("message"), _method("notifications/message", "notification")))
    with pytest.raises(ValueError, match="NOTIFICATIONS_MESSAGE"):
        methods_module(pin, model(_method("notifications/message"), _method("message", "notification")))
    with pytest.raises(ValueError, match="REQUESTS"):
        methods_module(pin, model(_method("requests")))


@pytest.mark.parametrize("version", VERSIONS)
def test_every_constant_follows_the_rule(version: str) -> None:
    module = load(version)
    for wire, spec in module.methods.REQUESTS.items():
        assert isinstance(spec, RequestSpec)
        assert getattr(module.methods, const_name(_method(wire))) is spec
    for wire, note in module.methods.NOTIFICATIONS.items():
        assert isinstance(note, NotificationSpec)
        assert getattr(module.methods, const_name(_method(wire, "notification"))) is note
    assert module.stubs.HANDLER_METHODS == {
        handler_name(_method(wire, kind)): wire
        for kind, table in (
            ("request", module.methods.REQUESTS),
            ("notification", module.methods.NOTIFICATIONS),
        )
        for wire in table
    }


def test_the_tables_tell_initialize_from_initialized() -> None:
    methods = load("2025-06-18").methods
    assert methods.INITIALIZE.method == "initialize"
    assert methods.NOTIFICATIONS_INITIALIZED.method == "notifications/initialized"
    assert methods.SAMPLING_CREATE_MESSAGE.method == "sampling/createMessage"
    assert methods.NOTIFICATIONS_MESSAGE.method == "notifications/message"
    for old in ("INITIALIZED", "MESSAGE", "SAMPLING_CREATEMESSAGE", "LOGGING_SETLEVEL", "CANCELLED"):
        assert not hasattr(methods, old), old
    stubs = load("2025-06-18").stubs
    assert hasattr(stubs.HandlesSamplingCreateMessage, "on_sampling_create_message")
    assert hasattr(stubs.HandlesNotificationsInitialized, "on_notifications_initialized")
    assert hasattr(stubs.HandlesInitialize, "on_initialize")


class LevelAndRoots(
    stubs.HandlesLoggingSetLevel[RequestContext],
    stubs.HandlesNotificationsRootsListChanged[RequestContext],
):
    """Handlers named by the rule, for a method in camelCase and for a notification."""

    def __init__(self) -> None:
        self.levels: list[str] = []
        self.roots_changed = anyio.Event()

    async def on_logging_set_level(
        self, params: types.SetLevelRequestParams, ctx: RequestContext, /
    ) -> types.EmptyResult:
        self.levels.append(params.level)
        return types.EmptyResult()

    async def on_notifications_roots_list_changed(
        self, params: types.NotificationParams, ctx: RequestContext, /
    ) -> None:
        self.roots_changed.set()


@pytest.mark.anyio
async def test_add_handlers_finds_handlers_by_these_names() -> None:
    server = Server("named", "1", logging=True)
    handlers = LevelAndRoots()
    server.add_handlers(handlers)
    async with connected(server) as client:
        await client.set_logging_level("error")
        await client.send_roots_list_changed()
        with anyio.fail_after(5):
            await handlers.roots_changed.wait()
    assert handlers.levels == ["error"]

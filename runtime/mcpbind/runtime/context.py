"""The context a handler gets: what it knows about the message it handles and what it can
send while it runs (:class:`RequestContext`), and whether log messages go out on a session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar

from msgspec import UNSET

from mcpbind import types
from mcpbind.protocol.envelope import Envelope
from mcpbind.protocol.errors import INVALID_REQUEST, McpError
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.methods import NotificationSpec, RequestSpec, ToClient, ToServer
from mcpbind.runtime.access import current_access_token
from mcpbind.runtime.rounds import ASKING_METHODS, Rounds

if TYPE_CHECKING:
    from mcpbind.oauth.access_token import AccessToken
    from mcpbind.runtime.session import Session

__all__ = [
    "ClientContext",
    "LOG_LEVELS",
    "RequestContext",
    "ServerContext",
    "require_logging",
    "sends_logs",
]

methods = types.methods

P = TypeVar("P")
R = TypeVar("R")
if TYPE_CHECKING:
    # A default (PEP 696) keeps a bare ``RequestContext`` meaning a server's context.
    from typing_extensions import TypeVar as _DefaultingTypeVar

    SendsT = _DefaultingTypeVar("SendsT", contravariant=True, default=ToClient)
else:
    SendsT = TypeVar("SendsT", contravariant=True)


class RequestContext(Generic[SendsT]):
    """What a handler knows about the message it handles and can do while it runs.

    ``request_id`` is ``None`` in a notification's handler.

    The type parameter says, for the type checker only, what this side may send
    (:mod:`mcpbind.protocol.methods`): a bare ``RequestContext`` is a server's
    (``RequestContext[ToClient]``, also named :data:`ServerContext`), whose :meth:`request`
    takes ``roots/list`` but not ``tools/call``; a client's handlers may take a
    :data:`ClientContext` (``RequestContext[ToServer]``) to have their sends checked the
    other way round.
    """

    __slots__ = ("_progress_token", "envelope", "method", "request_id", "rounds", "session")

    def __init__(
        self,
        session: Session,
        request_id: RequestId | None,
        method: str,
        progress_token: str | int | None,
        envelope: Envelope | None = None,
    ) -> None:
        self.session = session
        self.request_id = request_id
        self.method = method
        self._progress_token = progress_token
        # A stateless request's own metadata (version, client capabilities and identity, log
        # level, a multi round-trip retry's answers); ``None`` in a session's handlers.
        self.envelope = envelope
        # A stateless tools/call, prompts/get or resources/read's questions and answers
        # (multi round-trip requests, :mod:`mcpbind.runtime.rounds`); ``None`` otherwise.
        self.rounds: Rounds | None = None

    @property
    def protocol_version(self) -> str:
        """The version this request speaks: its own (stateless), else its session's."""
        if self.envelope is not None:
            return self.envelope.version
        version = self.session.connection.protocol_version
        assert version is not None
        return version

    @property
    def peer_capabilities(self) -> Any:
        """The client's capabilities (in a server's handler: those this request declares, or
        its session's), or the server's (in a client's)."""
        if self.envelope is not None:
            return self.envelope.client_capabilities
        return self.session.connection.peer.capabilities

    @property
    def peer_info(self) -> types.Implementation | None:
        if self.envelope is not None:
            return self.envelope.client_info
        return self.session.connection.peer.info

    @property
    def lifespan_state(self) -> Any:
        """What the server's lifespan yielded (``Server(lifespan=...)``, see
        :mod:`mcpbind.runtime.lifespan`); ``RuntimeError`` without one, or while it is not
        running."""
        lifespan = self.session.lifespan
        if lifespan is None:
            raise RuntimeError("no lifespan: give the server one with Server(lifespan=...)")
        return lifespan.state

    @property
    def access_token(self) -> AccessToken | None:
        """The verified OAuth access token the request came with (its subject, scopes and
        claims), on a server protected by :mod:`mcpbind.server.auth`; ``None`` otherwise."""
        return current_access_token.get()

    @property
    def progress_token(self) -> str | int | None:
        return self._progress_token

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` if the caller asked for progress; else do nothing."""
        if self._progress_token is None:
            return
        params = types.ProgressNotificationParams(
            progress_token=self._progress_token,
            progress=progress,
            total=UNSET if total is None else total,
            message=UNSET if message is None else message,
        )
        await self.session.notify(methods.NOTIFICATIONS_PROGRESS, params, related=self.request_id)

    async def request(self, spec: RequestSpec[P, R, SendsT], params: P, *, timeout: float | None = None) -> R:
        """Send a request to the peer (sampling, elicitation, roots from a server's handler).

        On a stateless request (2026-07-28) sampling, elicitation and roots are asked with the
        multi round-trip pattern instead, as for :meth:`elicit`."""
        if self.envelope is not None and spec.method in ASKING_METHODS:
            answer: R = self._ask(spec.method, params)
            return answer
        return await self.session.request(spec, params, timeout=timeout, related=self.request_id)

    async def create_message(
        self: RequestContext[ToClient], params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateTaskResult:
        """``sampling/createMessage``: needs the client's ``sampling`` capability (see
        :meth:`elicit` for stateless requests)."""
        if self.envelope is not None:
            result: types.CreateMessageResult = self._ask(methods.SAMPLING_CREATE_MESSAGE.method, params)
            return result
        return await self.session.request(methods.SAMPLING_CREATE_MESSAGE, params, related=self.request_id)

    async def elicit(
        self: RequestContext[ToClient], params: types.ElicitRequestFormParams | types.ElicitRequestURLParams
    ) -> types.ElicitResult | types.CreateTaskResult:
        """``elicitation/create``: needs the client's ``elicitation`` capability.

        On a session the request is sent to the client now. On a stateless request (2026-07-28:
        ``tools/call``, ``prompts/get``, ``resources/read`` only) the handler is run again on
        each retry, this call getting the answer the client gave to it (see
        :mod:`mcpbind.runtime.rounds`); a capability the request's ``clientCapabilities`` lack
        is a -32021 error."""
        if self.envelope is not None:
            result: types.ElicitResult = self._ask(methods.ELICITATION_CREATE.method, params)
            return result
        return await self.session.request(methods.ELICITATION_CREATE, params, related=self.request_id)

    async def list_roots(self: RequestContext[ToClient]) -> types.ListRootsResult:
        """``roots/list``: needs the client's ``roots`` capability (see :meth:`elicit` for
        stateless requests)."""
        if self.envelope is not None:
            result: types.ListRootsResult = self._ask(methods.ROOTS_LIST.method, types.RequestParams())
            return result
        return await self.session.request(methods.ROOTS_LIST, types.RequestParams(), related=self.request_id)

    def _ask(self, method: str, params: Any) -> Any:
        """The answer to an ask of a stateless request's handler, or ``InputRequired``."""
        rounds = self.rounds
        if rounds is None:
            raise McpError(
                INVALID_REQUEST,
                f"{method} cannot be asked while handling {self.method}: in protocol version "
                f"{self.protocol_version} only tools/call, prompts/get and resources/read may ask "
                "the client for input",
            )
        return rounds.answer(method, params)

    async def notify(self, spec: NotificationSpec[P, SendsT], params: P) -> None:
        """Send any notification this side may send (tied to this request, where there is one)."""
        await self.session.notify(spec, params, related=self.request_id)

    async def send_tool_list_changed(self) -> None:
        """Tell this session's client that the tool list changed (``send_prompt_list_changed``,
        ``send_resource_list_changed`` and ``send_resource_updated`` likewise). Nothing is sent
        for a stateless request: such a client hears of changes only on the
        ``subscriptions/listen`` streams it asked for them on, which :meth:`Server.tools_changed
        <mcpbind.server.server.Server.tools_changed>` (and the like) reach."""
        if self.envelope is None:
            await self.session.notify(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED, types.NotificationParams())

    async def send_prompt_list_changed(self) -> None:
        if self.envelope is None:
            await self.session.notify(methods.NOTIFICATIONS_PROMPTS_LIST_CHANGED, types.NotificationParams())

    async def send_resource_list_changed(self) -> None:
        if self.envelope is None:
            await self.session.notify(
                methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED, types.NotificationParams()
            )

    async def send_resource_updated(self, uri: str) -> None:
        if self.envelope is None:
            await self.session.notify(
                methods.NOTIFICATIONS_RESOURCES_UPDATED, types.ResourceUpdatedNotificationParams(uri=uri)
            )

    @property
    def log_threshold(self) -> types.LoggingLevel | None:
        """The least severe level of the log messages the client wants from this handler:
        what a stateless request set in its ``_meta`` (``None``, no log messages, when it set
        nothing), else what the session set with ``logging/setLevel``."""
        if self.envelope is not None:
            return self.envelope.log_level
        return self.session.log_level

    async def log(self, level: types.LoggingLevel, data: Any, logger: str | None = None) -> None:
        """``notifications/message`` with ``data`` (any JSON value) at ``level``, one of the
        specification's syslog severities (``"debug"``, ``"info"``, ``"notice"``, ``"warning"``,
        ``"error"``, ``"critical"``, ``"alert"``, ``"emergency"``; ``ValueError`` otherwise),
        from ``logger`` if given. Sent only if ``level`` passes the level the client set with
        ``logging/setLevel`` (everything passes until it sets one). ``McpError`` if this server
        did not declare the ``logging`` capability (``Server(..., logging=True)``); nothing
        is sent where no log message can reach the client (see :func:`sends_logs`)."""
        if not sends_logs(self.session):
            return
        threshold = self.log_threshold
        if threshold is None or _log_rank(level) < LOG_LEVELS.index(threshold):
            return
        params = types.LoggingMessageNotificationParams(
            level=level, data=data, logger=UNSET if logger is None else logger
        )
        await self.session.notify(methods.NOTIFICATIONS_MESSAGE, params, related=self.request_id)


# The context of a server's handlers (what a bare ``RequestContext`` means) and of a client's.
ServerContext: TypeAlias = RequestContext[ToClient]
ClientContext: TypeAlias = RequestContext[ToServer]


def sends_logs(session: Session) -> bool:
    """Whether log messages go out on ``session``: ``False`` where its transport can carry none
    (Streamable HTTP answering requests with JSON and without a GET stream, or stateless with
    JSON: ``logging`` is then not declared, and log messages are dropped, as progress is);
    otherwise ``True``, or :class:`McpError` as :func:`require_logging` says."""
    if not session.connection.delivery.related:
        return False
    require_logging(session)
    return True


def _log_rank(level: str) -> int:
    try:
        return LOG_LEVELS.index(level)
    except ValueError:
        raise ValueError(f"unknown logging level {level!r}: one of {', '.join(LOG_LEVELS)}") from None


def require_logging(session: Session) -> None:
    """Raise :class:`McpError` unless ``session`` is a server's that declared ``logging``: the
    specification lets only such a server send log messages."""
    if getattr(session.connection.capabilities, "logging", UNSET) is UNSET:
        raise McpError(
            INVALID_REQUEST,
            "This server did not declare the 'logging' capability, so it may not send log messages "
            "(declare it with Server(..., logging=True))",
        )


# The syslog severities of MCP logging, least severe first.
LOG_LEVELS: tuple[types.LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)

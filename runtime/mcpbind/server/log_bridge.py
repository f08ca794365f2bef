"""Forward Python ``logging`` records to the client as ``notifications/message``.

    with forward_logging(ctx, "myapp"):
        logging.getLogger("myapp.db").warning("slow query")     # reaches the client

Records are mapped to MCP's syslog levels (DEBUG->debug, INFO->info, WARNING->warning,
ERROR->error, CRITICAL->critical) and filtered by the level the client set with
``logging/setLevel`` (a stateless request: the level its ``_meta`` names, none without one;
its records are sent as belonging to it). The handler works from the event loop and from the worker threads that
run sync tools.

The server must declare the ``logging`` capability (``Server(..., logging=True)``): without it
:class:`McpLogHandler` and :func:`forward_logging` raise ``McpError`` at once. Where no log
message can reach the client (see :func:`~mcpbind.runtime.session.sends_logs`) they forward nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import anyio.from_thread

from mcpbind import types
from mcpbind.runtime.context import LOG_LEVELS, RequestContext, sends_logs

__all__ = ["McpLogHandler", "forward_logging", "mcp_level"]


def mcp_level(levelno: int) -> types.LoggingLevel:
    if levelno >= logging.CRITICAL:
        return "critical"
    if levelno >= logging.ERROR:
        return "error"
    if levelno >= logging.WARNING:
        return "warning"
    if levelno >= logging.INFO:
        return "info"
    return "debug"


class McpLogHandler(logging.Handler):
    """A logging handler that sends each record to the client of ``ctx``'s session."""

    def __init__(self, ctx: RequestContext, level: int = logging.NOTSET) -> None:
        self.sends = sends_logs(ctx.session)
        super().__init__(level)
        self.ctx = ctx

    def emit(self, record: logging.LogRecord) -> None:
        session = self.ctx.session
        level = mcp_level(record.levelno)
        threshold = self.ctx.log_threshold
        if not self.sends or session.closed or threshold is None:
            return
        if LOG_LEVELS.index(level) < LOG_LEVELS.index(threshold):
            return
        try:
            params = types.LoggingMessageNotificationParams(
                level=level, data=self.format(record), logger=record.name
            )
            data = session.connection.notification(types.methods.NOTIFICATIONS_MESSAGE, params)
            # A stateless request's records go with it (over HTTP: on its response stream).
            related = self.ctx.request_id if self.ctx.envelope is not None else None
            try:
                anyio.get_current_task()
            except RuntimeError:  # a worker thread (a sync tool): hand the send to the loop
                anyio.from_thread.run_sync(session.send_soon, data, related)
            else:
                session.send_soon(data, related)
        except Exception:
            self.handleError(record)


@contextmanager
def forward_logging(
    ctx: RequestContext, logger: str | None = None, level: int = logging.DEBUG
) -> Iterator[None]:
    """Forward ``logger``'s records (the root logger by default) while the block runs."""
    target = logging.getLogger(logger)
    handler = McpLogHandler(ctx, level)
    previous = target.level
    if target.level == logging.NOTSET or target.level > level:
        target.setLevel(level)
    target.addHandler(handler)
    try:
        yield
    finally:
        target.removeHandler(handler)
        target.setLevel(previous)

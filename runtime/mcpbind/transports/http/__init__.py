"""MCP over HTTP: the Streamable HTTP server (an ASGI application) and client (on httpx), and
the legacy HTTP+SSE transport of 2024-11-05.

Import from the submodules: ``mcpbind.transports.http.server`` (a package), ``mcpbind.transports.http.client``,
``mcpbind.transports.http.legacy``. The client needs the ``http`` extra (``pip install mcpbind[http]``).
What both servers use: ``security`` (Host/Origin/CORS as ASGI middleware, for any ASGI app),
``body``, ``media_types``, ``errors``, ``disconnect``, ``sse_encode``, ``sse``, and
``endpoint`` (what they need of the server they serve: never ``mcpbind.server`` itself).
"""

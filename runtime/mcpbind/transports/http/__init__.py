"""MCP over HTTP: the Streamable HTTP server (an ASGI application) and client (on httpx), and
the legacy HTTP+SSE transport of 2024-11-05.

Import from the submodules: ``mcpbind.transports.http.server``, ``mcpbind.transports.http.client``,
``mcpbind.transports.http.legacy``. The client needs the ``http`` extra (``pip install mcpbind[http]``).
"""

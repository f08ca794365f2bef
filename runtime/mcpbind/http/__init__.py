"""MCP over HTTP: the Streamable HTTP server (an ASGI application) and client (on httpx), and
the legacy HTTP+SSE transport of 2024-11-05.

Import from the submodules: ``mcpbind.http.server``, ``mcpbind.http.client``,
``mcpbind.http.legacy``. The client needs the ``http`` extra (``pip install mcpbind[http]``).
"""

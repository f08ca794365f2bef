"""OAuth 2.1 for MCP clients."""

"""mcpbind's code generator: pinned MCP schema.json files in, typed msgspec bindings out."""

GENERATOR_VERSION = "0.1.0"

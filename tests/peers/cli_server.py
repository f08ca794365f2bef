"""A small server for the CLI tests: one of each feature."""

from mcpbind.server.server import Server

server = Server("cli-demo", "1.0")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def fail() -> str:
    raise ValueError("this tool always fails")


@server.resource("config://app")
def config() -> str:
    return "retries=3"


@server.prompt()
def hello(name: str) -> str:
    return f"hello {name}"

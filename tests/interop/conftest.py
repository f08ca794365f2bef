"""The interop tests need the official MCP Python SDK (``mcp`` from PyPI, which ``nox -s interop``
installs); without it they are not collected, so a plain ``pytest`` still runs the rest."""

from __future__ import annotations

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("mcp") is not None else ["test_official_*.py"]

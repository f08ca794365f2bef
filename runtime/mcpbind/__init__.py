"""mcpbind: the Model Context Protocol for Python, typed from the official schemas."""

from __future__ import annotations

# The generated bindings live in a second source root (generated/mcpbind) during development;
# a wheel merges both into one folder. Extending the search path makes both layouts import.
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

__version__ = "0.1.0"

"""mcpbind: the Model Context Protocol for Python, typed from the official schemas."""

from __future__ import annotations

import os as _os
import sys as _sys

# The generated bindings live in a second source root (generated/mcpbind) during development;
# a wheel merges both into one folder. In the development layout, every ``mcpbind`` folder on
# sys.path joins this package (what pkgutil.extend_path does, without importing pkgutil and
# importlib.util, a few milliseconds of every start).
if not _os.path.isdir(_os.path.join(__path__[0], "schema")):
    _known = {_os.path.realpath(entry) for entry in __path__}
    for _entry in _sys.path:
        if isinstance(_entry, str):
            _portion = _os.path.join(_entry or _os.curdir, __name__)
            if _os.path.realpath(_portion) not in _known and _os.path.isdir(_portion):
                _known.add(_os.path.realpath(_portion))
                __path__.append(_portion)

__version__ = "0.1.0"

"""Importing a callable a user names (``package.module:function``)."""

from __future__ import annotations

import re
from typing import Any

#: ``module:callable`` (a dotted module path, a colon, a dotted attribute path).
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"
FACTORY_PATTERN = rf"^{_DOTTED}:{_DOTTED}$"


def import_callable(path: str, what: str) -> Any:
    """The callable named ``"module:callable"`` (the attribute may be dotted), imported;
    ``ValueError`` naming ``what`` (the config field) if the module cannot be imported or has
    no such callable."""
    from importlib import import_module

    if not re.match(FACTORY_PATTERN, path):
        raise ValueError(f"{what} must be 'module:callable', got {path!r}")
    module_name, _, attribute = path.partition(":")
    try:
        found: Any = import_module(module_name)
    except ImportError as error:
        raise ValueError(f"{what} {path!r}: cannot import {module_name} ({error})") from None
    for part in attribute.split("."):
        found = getattr(found, part, None)
    if not callable(found):
        raise ValueError(f"{what} {path!r}: {module_name} has no callable {attribute}")
    return found

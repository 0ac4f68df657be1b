"""Importing a callable a user names (``package.module:function``): code that a config runs
only when the user says so.

A config is data: ``data.builder`` or ``architecture.factory`` naming ``"module:callable"``
imports and runs that code, so it is refused unless the user opts in with
``--trust-config-code`` or the environment variable :data:`TRUST_ENV` (the convention of
Hugging Face's ``trust_remote_code``). Even then a callable of Python's standard library
(``os:system``, ``subprocess:getoutput``, ``builtins:eval``, reached directly or through an
attribute of the user's module) is never called: no builder or network is one.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

#: ``module:callable`` (a dotted module path, a colon, a dotted attribute path).
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"
FACTORY_PATTERN = rf"^{_DOTTED}:{_DOTTED}$"
#: The environment variable that lets configs import code (``1``, ``true`` or ``yes``); set
#: by ``--trust-config-code``, and inherited by worker processes.
TRUST_ENV = "FDBENCH_TRUST_CONFIG_CODE"


def config_code_trusted() -> bool:
    """Whether the user opted in to running code named in configs (:data:`TRUST_ENV`)."""
    return os.environ.get(TRUST_ENV, "").strip().lower() in {"1", "true", "yes"}


def trust_config_code() -> None:
    """Opt in to running code named in configs for this process and its workers (the command
    line's ``--trust-config-code``)."""
    os.environ[TRUST_ENV] = "1"


def _standard_library(module: object) -> bool:
    top = str(module or "").partition(".")[0]
    return top in sys.stdlib_module_names


def check_named_code(path: str, what: str) -> None:
    """Before any work: ``ValueError`` naming ``what`` (the config field) unless ``path`` is
    ``"module:callable"`` outside Python's standard library and the user opted in to code in
    configs (:func:`config_code_trusted`). Nothing is imported."""
    if not re.match(FACTORY_PATTERN, path):
        raise ValueError(f"{what} must be 'module:callable', got {path!r}")
    module_name = path.partition(":")[0]
    if _standard_library(module_name):
        raise ValueError(
            f"{what} {path!r} names a function of Python's standard library; a config never "
            "runs those: name your own builder or network"
        )
    if not config_code_trusted():
        raise ValueError(
            f"{what} {path!r} imports and runs code from {module_name}; a config is data "
            f"unless you trust it: pass --trust-config-code or set {TRUST_ENV}=1"
        )


def import_callable(path: str, what: str) -> Any:
    """The callable named ``"module:callable"`` (the attribute may be dotted), imported.

    ``ValueError`` naming ``what`` (the config field) if the user has not opted in to code in
    configs (:func:`config_code_trusted`), if it names a callable of Python's standard library,
    or if the module cannot be imported or has no such callable.
    """
    from importlib import import_module

    module_name, _, attribute = path.partition(":")
    check_named_code(path, what)
    try:
        found: Any = import_module(module_name)
    except ImportError as error:
        raise ValueError(f"{what} {path!r}: cannot import {module_name} ({error})") from None
    for part in attribute.split("."):
        found = getattr(found, part, None)
    if not callable(found):
        raise ValueError(f"{what} {path!r}: {module_name} has no callable {attribute}")
    if _standard_library(getattr(found, "__module__", None)):
        raise ValueError(
            f"{what} {path!r} reaches {getattr(found, '__module__', '?')}."
            f"{getattr(found, '__qualname__', attribute)} of Python's standard library; a "
            "config never runs those: name your own builder or network"
        )
    return found

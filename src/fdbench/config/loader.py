"""Reading a configuration: YAML with repeated keys refused, finite numbers only, and one-line
errors naming the offending field."""

from __future__ import annotations

import os
from typing import Any

from pydantic import ValidationError

from fdbench.config.schema import METHODS_CONTEXT, BenchmarkConfig, MethodLookup, _format_errors
from fdbench.core.validation import first_non_finite
from fdbench.core.yaml import load_yaml


def validate_config(data: Any, *, methods: MethodLookup, source: str = "config") -> BenchmarkConfig:
    """Validate a mapping (e.g. parsed YAML) into a :class:`BenchmarkConfig`, every method's
    ``kind``, ``params`` and ``grid`` against the training methods ``methods`` hands in
    (``kind`` -> method class; :func:`fdbench.jobs.plan.parse_config` hands in fdbench's).

    Raises ``ValueError`` whose message names ``source`` and, for every problem, the dotted
    path of the offending field and what was expected. NaN and infinite numbers are refused
    anywhere, free-form ``args``/``params``/``options`` included.
    """
    if not isinstance(data, dict):
        raise ValueError(
            f"{source}: expected a mapping at the top level, got {type(data).__name__}"
        )
    bad = first_non_finite(data)
    if bad is not None:
        raise ValueError(
            f"{source}: invalid configuration: {bad}: expected a finite number, got NaN or "
            "infinity (no setting of fdbench can work with one)"
        )
    try:
        return BenchmarkConfig.model_validate(data, context={METHODS_CONTEXT: methods})
    except ValidationError as error:
        raise ValueError(f"{source}: invalid configuration: {_format_errors(error)}") from None


def read_yaml(path: str | os.PathLike[str]) -> Any:
    """The parsed content of the YAML configuration file at ``path``, read with the one YAML
    loader of every command (:func:`fdbench.core.yaml.load_yaml`): a repeated key, an alias
    bomb, a ``!!python`` tag, a file over 16 MiB, a missing file, a file that is not UTF-8 text
    or not YAML is a one-line ``ValueError`` naming the file."""
    return load_yaml(path)

"""The JSON Schemas every persisted document is validated by (``schemas/``),
loaded and checked once per process, and the TOML files (policies) read before it."""

from __future__ import annotations

import functools
import json
import os
import tomllib
from importlib import resources
from typing import Any

import jsonschema

from skipindex.errors import InvalidSpecError

__all__ = ["read_toml", "validator"]


@functools.cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    """The validator of ``schemas/<name>.schema.json`` (the schema itself checked first)."""
    text = resources.files("skipindex").joinpath(f"schemas/{name}.schema.json").read_text()
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def read_toml(path: str | os.PathLike[str], what: str) -> tuple[dict[str, Any], str]:
    """The TOML document at ``path`` and its absolute path; ``what`` names the file
    in the errors (``policy file not found: ...``)."""
    source = os.path.abspath(os.fspath(path))
    try:
        with open(source, "rb") as handle:
            return tomllib.load(handle), source
    except FileNotFoundError:
        raise InvalidSpecError(f"{what} not found: {source}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InvalidSpecError(f"{source}: not valid TOML: {exc}") from None

"""The JSON Schemas every persisted JSON document is validated by (``schemas/``),
loaded and checked once per process."""

from __future__ import annotations

import functools
import json
from importlib import resources

import jsonschema

__all__ = ["validator"]


@functools.cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    """The validator of ``schemas/<name>.schema.json`` (the schema itself checked first)."""
    text = resources.files("skipindex").joinpath(f"schemas/{name}.schema.json").read_text()
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)

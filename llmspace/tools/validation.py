"""Argument checking against a tool's JSON Schema, with `jsonschema`.

`check_arguments(tool, arguments)` returns a message naming the bad field, or None; the
router checks every call before any executor runs. Validators are cached per schema.
Leniency: a missing leading `description` parameter (the built-ins' human summary) is
not an error. A schema that is itself invalid is not used to reject calls (MCP servers
sometimes publish loose schemas); `tools/functions.py` reports those when tools are defined.

The validator of a schema is built (and the schema checked) once: calls find it by the schema
dict's identity, confirmed by comparing it with a copy taken when it was built (a schema
changed in place is built again; values Python holds equal, 1, 1.0 and True, count as the
same), else by the schema's canonical JSON text. A validator keeps its own copy of the schema. This lookup
sits on every tool call's path (a plugin tool's round trip is a fraction of a millisecond).
"""

from __future__ import annotations

import copy
import json
import threading
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError

from ..core.model import Tool

_cache: dict[str, Any] = {}
_cache_lock = threading.Lock()
# id(schema) -> (the schema itself, kept alive so that its id is not reused; a copy of it as
# it was; its validator)
_by_identity: dict[int, tuple[dict[str, Any], dict[str, Any], Any]] = {}
CACHE_SIZE = 1024


def validator_for(schema: dict[str, Any]) -> Any | None:
    """A cached validator for `schema` (draft from `$schema`, default 2020-12), or None if invalid."""
    known = _by_identity.get(id(schema))
    if known is not None and known[0] is schema and known[1] == schema:
        return known[2]
    validator = _built(schema)
    try:
        snapshot = copy.deepcopy(schema)
    except Exception:  # not plain data: found by its text next time
        return validator
    with _cache_lock:
        if len(_by_identity) > CACHE_SIZE:
            _by_identity.clear()
        _by_identity[id(schema)] = (schema, snapshot, validator)
    return validator


def _built(schema: dict[str, Any]) -> Any | None:
    """The validator of `schema` by its canonical text (built on the first use of that text)."""
    key = json.dumps(schema, sort_keys=True, default=str)
    with _cache_lock:
        if key in _cache:
            return _cache[key]
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
        validator: Any | None = cls(copy.deepcopy(schema))  # its own copy: the caller's may change
    except jsonschema.SchemaError:
        validator = None
    with _cache_lock:
        if len(_cache) > CACHE_SIZE:
            _cache.clear()
        _cache[key] = validator
    return validator


def _field(error: ValidationError) -> str:
    path = "/".join(str(p) for p in error.absolute_path)
    if error.validator == "required" and isinstance(error.message, str):
        # "'x' is a required property" -> name the missing field
        missing = error.message.split("'")[1] if error.message.count("'") >= 2 else ""
        return f"{path}/{missing}" if path else missing
    if error.validator == "additionalProperties":
        return path or "(arguments)"
    return path or "(arguments)"


def _is_missing_description(error: ValidationError) -> bool:
    return error.validator == "required" and not list(error.absolute_path) and error.message == "'description' is a required property"


def check_arguments(tool: Tool, arguments: dict[str, Any]) -> str | None:
    """A message naming the first bad field of `arguments` for `tool`, or None when they fit."""
    schema = tool.parameters
    if not isinstance(schema, dict) or not schema:
        return None
    validator = validator_for(schema)
    if validator is None:
        return None
    errors = [e for e in validator.iter_errors(arguments) if not _is_missing_description(e)]
    if not errors:
        return None
    errors.sort(key=lambda e: (len(list(e.absolute_path)), str(list(e.absolute_path))))
    first = errors[0]
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    return f"Invalid arguments for {tool.name}: {_field(first)}: {first.message}{more}"

"""JSON Schema of the Thread file format, generated from the pydantic model.

`thread_json_schema()` is the schema (draft 2020-12) of a thread file as stored on disk,
including the top-level `blobs` image table; `schema_bytes()` is its committed form
(`llmspace/core/thread.schema.json`, kept in sync by a test). Unknown keys are allowed
at every level, as in the original app.

Pure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..jsonio import dumps_pretty
from .model import Thread

SCHEMA_FILE = Path(__file__).with_name("thread.schema.json")
SCHEMA_ID = "https://llm-space.local/schemas/thread.schema.json"


def thread_json_schema() -> dict[str, Any]:
    """The Thread file schema (generated, so it always matches the model)."""
    body = Thread.model_json_schema(mode="validation")
    props = dict(body.get("properties", {}))
    props["blobs"] = {
        "type": "object",
        "title": "Blobs",
        "description": "Image table: sha256 hex of the base64 text -> the base64 text. Message parts refer "
                       "to entries as `blob:sha256:<hex>`; readers restore them inline.",
        "additionalProperties": {"type": "string"},
    }
    body["properties"] = props
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "description": "An LLM Space thread file (title, model, context, run history, evaluations). "
                       "Every field is optional and unknown keys are kept.",
        **body,
    }


def schema_bytes() -> bytes:
    """The schema as written to `thread.schema.json` (2-space indent, trailing newline)."""
    return dumps_pretty(thread_json_schema(), trailing_newline=True)

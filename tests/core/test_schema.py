"""The Thread JSON Schema is generated from the model and its committed copy stays in sync."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from llmspace.core.examples import seed_threads
from llmspace.core.schema import SCHEMA_FILE, schema_bytes, thread_json_schema
from llmspace.core.synthetic import big_thread_data
from llmspace.core.threadio import serialize_thread, thread_from_data

SPEC_EXAMPLE = Path(__file__).parents[1] / "fixtures" / "spec-example.json"


def test_committed_schema_matches_the_model():
    assert SCHEMA_FILE.read_bytes() == schema_bytes(), (
        "llmspace/core/thread.schema.json is stale: regenerate it with "
        "`python -m llmspace schema thread > llmspace/core/thread.schema.json`")


def test_schema_accepts_real_threads_and_rejects_bad_ones():
    validator = jsonschema.Draft202012Validator(thread_json_schema())
    validator.check_schema(validator.schema)
    assert not list(validator.iter_errors(json.loads(SPEC_EXAMPLE.read_text())))
    for _, thread in seed_threads():
        assert not list(validator.iter_errors(json.loads(serialize_thread(thread))))
    packed = json.loads(serialize_thread(thread_from_data(big_thread_data(300_000, 40))))
    assert "blobs" in packed and not list(validator.iter_errors(packed))
    assert list(validator.iter_errors({"context": {"messages": [{"role": "user"}]}}))
    assert list(validator.iter_errors({"model": {"provider": "x", "id": "y", "params": {"reasoning": "max"}}}))

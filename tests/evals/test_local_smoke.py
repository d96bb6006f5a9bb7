"""Smoke test on the built-in llama.cpp engine with a real small model: an evaluation of two
cases runs to the end with no errored cell. Skips locally (fails on CI) without the engine
or the model, like the other tests of the engine (`tests/local/engine_support.py`)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from llmspace.cli import main
from llmspace.core.threadio import serialize_thread, thread_from_data
from llmspace.local import engine
from tests.local.engine_support import GEMMA, setup_root


def test_an_evaluation_runs_on_the_local_engine(home: Path) -> None:
    root, _model = setup_root(home, GEMMA, name="m")
    ws = home / "workspace"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "hello.json").write_bytes(serialize_thread(thread_from_data({
        "title": "hello", "model": {"provider": "local", "id": "m", "params": {"maxTokens": 12, "temperature": 0}},
        "context": {"messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "{{question}}"}]}]}})))
    (ws / "cases.jsonl").write_text('{"id": "a", "question": "Say hello."}\n{"id": "b", "question": "Name a colour."}\n',
                                    encoding="utf-8")
    spec = {"thread": "hello.json", "dataset": "cases.jsonl", "models": ["local/m"], "concurrency": 1,
            "assert": [{"type": "max-tokens", "value": 12}, {"type": "max-latency", "value": 600000}]}
    (ws / "hello.eval.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    try:
        code = main(["eval", "run", str(ws / "hello.eval.yaml"), "--no-cache"])
    finally:
        engine.stop_engine(root)
    (folder,) = (home / "evals" / "hello").iterdir()
    summary = json.loads((folder / "summary.json").read_text("utf-8"))
    assert summary["complete"] and summary["errors"] == 0, summary
    assert code == 0

"""`similar` offline (issue 42, item 3): embeddings from the built-in engine serving an embedding
GGUF — all-MiniLM-L6-v2, which `.ci/test_models.py` converts from a PyPI wheel — on a real
llama-server, reached as `--embedder local/NAME`. Skips without the model or llama-server
(fails on CI, like the other engine tests)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from llmspace.app import App
from llmspace.cli import main
from llmspace.evals.assertions import Observation, parse_assertion
from llmspace.evals.embeddings import resolve_embedder
from llmspace.local import engine
from llmspace.local import engine_files as ef
from llmspace.paths import DataRoot
from tests.evals.support import write_eval
from tests.local.engine_support import GEMMA, model_file, pid_gone, setup_root, wait_for

MINILM = ("all-minilm-l6-v2-f32.gguf", "ad66c6159df65ba35b57478b9527c4583afe6ee192c1e1787e3a770100c0cb9c")


@pytest.fixture
def minilm(home: Path) -> Iterator[DataRoot]:
    root, _model = setup_root(home, MINILM, name="minilm")
    yield root
    engine.stop_engine(root)


def test_the_engine_embeds_with_all_minilm_as_sentence_transformers_does(minilm: DataRoot) -> None:
    app = App(minilm)
    try:
        embedder = resolve_embedder(app.providers, "local", "minilm")
        # the similarities sentence-transformers documents for all-MiniLM-L6-v2
        assert embedder.similarity("The new movie is awesome", ["The new movie is so great"])[0] == pytest.approx(0.894, abs=0.01)
        assert embedder.similarity("A man is eating food.", ["A man is eating a piece of bread."])[0] == pytest.approx(0.755, abs=0.01)
        assert embedder.similarity("A man is eating food.", ["A monkey is playing drums."])[0] < 0.2

        check = embedder.check(parse_assertion({"type": "similar", "value": ["zebra", "The new movie is so great"]}, "test"),
                               Observation(output="The new movie is awesome"))
        assert check.passed and check.score == pytest.approx(0.894, abs=0.01)
        assert embedder.calls == 4
    finally:
        app.close()
    # the embedding engine is the one that ran, on its own run folder; the chat engine never started
    run = ef.run_dir(minilm.root)
    assert ef.read_record(run / "embed") is not None
    assert ef.read_record(run) is None


def test_an_evaluation_checks_similar_with_embedder_local_and_nothing_is_left_running(
        minilm: DataRoot, home: Path, srv, capsys) -> None:
    path = write_eval(home, srv, [], assertions=[])
    tests = [{"vars": {"question": "Extract as JSON: Ada is 36 years old."},
              "assert": [{"type": "similar", "value": '{"age": 36, "name": "Ada"}'}]},
             {"vars": {"question": "What is 2 + 2?"},
              "assert": [{"type": "similar", "value": "The weather in Lisbon is sunny today."},
                         {"type": "not-similar", "value": "The weather in Lisbon is sunny today."}]}]
    (home / "workspace" / "tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")

    code = main(["eval", "run", str(path), "--dataset", str(home / "workspace" / "tests.yaml"), "--embedder", "local/minilm"])
    assert code == 1, capsys.readouterr().err  # the second case fails its similar check

    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    rows = {r["output"]: r for r in map(json.loads, (folder / "results.jsonl").read_text("utf-8").splitlines())}
    ada = rows['{"name": "Ada", "age": 36}']["checks"][0]
    assert ada["pass"], ada
    similar, not_similar = rows["4"]["checks"]
    assert not similar["pass"] and "< 0.75" in similar["reason"]
    assert not_similar["pass"], not_similar
    assert not any(r.path.endswith("/embeddings") for r in srv.requests)  # the loopback model only answered

    record = ef.read_record(ef.run_dir(minilm.root) / "embed")
    assert record is not None
    assert engine.stop_engine(minilm)
    wait_for(lambda: pid_gone(int(record["pid"])), 60.0, "llama-server to end")


def test_local_add_tells_how_to_use_an_embedding_model_and_a_chat_model(home: Path, capsys) -> None:
    assert main(["local", "add", str(model_file(MINILM)), "--name", "mini"]) == 0
    assert "embedding model: use it with `llmspace eval run FILE --embedder local/mini`" in capsys.readouterr().out
    assert main(["local", "add", str(model_file(GEMMA)), "--name", "gem"]) == 0
    assert "--provider local --model gem" in capsys.readouterr().out

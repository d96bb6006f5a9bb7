"""`similar` assertions (issue 42, item 3): the cosine similarity of embeddings from an
OpenAI-compatible `/v1/embeddings` provider — here the loopback server, whose embedding is the
counts of the letters a–z — with promptfoo's default threshold 0.75, a list of references, the
`not-` form, `--embedder` and `embedder:`, and a refusal before any call without an embedder."""

from __future__ import annotations

import json

import pytest
import yaml

from llmspace.cli import main
from llmspace.errors import UserFacingError
from llmspace.evals.assertions import Observation, parse_assertion
from llmspace.evals.embeddings import Embedder, check_embedder, cosine
from llmspace.providers.base import Endpoint
from tests.evals.support import write_eval


def _embedder(srv) -> Embedder:
    return Embedder("loop/embed", Endpoint(provider_id="loop", api="openai-completions", base_url=srv.base_url), "embed")


def _check(embedder: Embedder, raw: dict, output: str):
    return embedder.check(parse_assertion({"type": "similar", **raw}, "test"), Observation(output=output))


def test_cosine_of_vectors():
    assert cosine([1.0, 0.0], [2.0, 0.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [0.0, 3.0]) == pytest.approx(0.0)
    assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0


def test_similar_passes_at_promptfoo_default_threshold_and_scores_the_best_reference(srv):
    embedder = _embedder(srv)

    same = _check(embedder, {"value": "the capital is Paris"}, "Paris is the capital")
    assert same.passed and same.score == pytest.approx(1.0)
    other = _check(embedder, {"value": "zzz qqq xxx"}, "Paris is the capital")
    assert not other.passed and "< 0.75" in other.reason
    listed = _check(embedder, {"value": ["zzz qqq", "capital Paris is the"]}, "Paris is the capital")
    assert listed.passed and listed.score == pytest.approx(1.0)
    strict = _check(embedder, {"value": "Paris is a capital city", "threshold": 0.999}, "Paris is the capital")
    assert not strict.passed and 0.75 < strict.score < 0.999
    assert _check(embedder, {"type": "not-similar", "value": "zzz qqq xxx"}, "Paris is the capital").passed


def test_vectors_are_asked_once_per_text(srv):
    embedder = _embedder(srv)
    for _ in range(3):
        _check(embedder, {"value": "the capital is Paris"}, "Paris is the capital")
    assert embedder.calls == 1
    assert [r.body_json["input"] for r in srv.requests if r.path.endswith("/embeddings")] == [
        ["Paris is the capital", "the capital is Paris"]]


def test_a_provider_without_embeddings_fails_the_check_with_its_answer(srv):
    srv.embed = None
    check = _check(_embedder(srv), {"value": "x"}, "y")
    assert not check.passed and "HTTP 404" in check.reason


def test_an_embedder_without_an_embeddings_route_is_refused():
    with pytest.raises(UserFacingError, match="no /embeddings route"):
        check_embedder("anthropic/claude", "anthropic-messages")
    check_embedder("openai/text-embedding-3-small", "openai-completions")


@pytest.mark.parametrize("raw", [{"type": "similar"}, {"type": "similar", "value": [1]},
                                 {"type": "similar", "value": "x", "threshold": 3}])
def test_similar_values_that_cannot_hold_are_refused_when_read(raw):
    with pytest.raises(UserFacingError):
        parse_assertion(raw, "tests.yaml test 1")


def _tests_file(home) -> str:
    ws = home / "workspace"
    tests = [{"vars": {"question": "Extract as JSON: Ada is 36 years old."},
              "assert": [{"type": "similar", "value": '{"age": 36, "name": "Ada"}'}]},
             {"vars": {"question": "What is 2 + 2?"}, "assert": [{"type": "similar", "value": "four"}]}]
    (ws / "tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")
    return str(ws / "tests.yaml")


def test_an_evaluation_checks_similar_with_the_embedder_of_the_flag_or_the_file(home, srv, capsys):
    path = write_eval(home, srv, [], assertions=[])
    tests = _tests_file(home)

    assert main(["eval", "run", str(path), "--dataset", tests, "--embedder", "loop/embed"]) == 1, capsys.readouterr().err

    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    rows = {r["output"]: r for r in map(json.loads, (folder / "results.jsonl").read_text("utf-8").splitlines())}
    assert rows['{"name": "Ada", "age": 36}']["checks"][0]["pass"]
    assert not rows["4"]["checks"][0]["pass"]  # "4" has no letters: similarity 0
    assert any(r.path.endswith("/embeddings") and r.body_json["model"] == "embed" for r in srv.requests)

    data = yaml.safe_load(path.read_text("utf-8"))
    path.write_text(yaml.safe_dump({**data, "embedder": "loop/embed"}), encoding="utf-8")
    assert main(["eval", "run", str(path), "--dataset", tests, "--fresh"]) == 1


def test_similar_without_an_embedder_is_refused_before_any_request(home, srv, capsys):
    path = write_eval(home, srv, [], assertions=[])
    tests = _tests_file(home)

    assert main(["eval", "run", str(path), "--dataset", tests]) == 2

    assert "needs an embedding model" in capsys.readouterr().err
    assert srv.requests == []

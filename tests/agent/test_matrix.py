"""Matrix runs against the loopback LLM server: models × variants, a failing cell, re-running
only that cell, the budget rule, the reports and the CLI."""

from __future__ import annotations

import json

import pytest

from llmspace.agent.matrix import load_results, rerun_failed, run_matrix, sibling_paths
from llmspace.agent.matrix_spec import MatrixSpec, parse_models, parse_variants
from llmspace.cli import main
from llmspace.errors import UserFacingError
from tests.support.llm_server import Turn, configure_provider

from .conftest import make_thread, save_thread, user

MODELS = [("loop", "loopback-model"), ("loop", "model-b")]
VARIANTS = {"formal": {"tone": "formal"}, "casual": {"tone": "casual"}}
BAD_REQUEST = b'{"error": {"message": "model-b refuses this prompt", "type": "invalid_request_error"}}'


@pytest.fixture
def rel(app, home, srv) -> str:
    configure_provider(home, srv, extra_models=["model-b"])
    thread = make_thread([user("Say hi")], context={"systemPrompt": "Answer in a {{tone}} tone."})
    save_thread(app, "greet.json", thread)
    return "greet.json"


def _cells(result):
    return {(c.model, c.variant): c for c in result.cells}


def test_two_models_by_two_variants_with_one_failing_cell_then_rerun_of_only_that_cell(app, srv, rel):
    srv.push(Turn(text="Good day."), Turn(text="Hey <b>you</b> & co"))
    srv.push_raw(status=400, body=BAD_REQUEST, headers={"Content-Type": "application/json"})
    srv.push(Turn(text="Yo!"))
    spec = MatrixSpec(models=MODELS, variants=VARIANTS, concurrency=1)

    result = run_matrix(app.runner, rel, spec)

    cells = _cells(result)
    assert [c.status for c in result.cells] == ["completed", "completed", "failed", "completed"]
    failed = cells[("loop/model-b", "formal")]
    assert "refuses this prompt" in (failed.error or "")
    assert cells[("loop/loopback-model", "formal")].output == "Good day."
    assert cells[("loop/model-b", "casual")].usage["output"] == 5
    thread = app.workspace.open(rel)
    assert len(thread.runHistory) == 3
    assert {r.id for r in thread.runHistory} == {c.run_id for c in result.cells if c.run_id}
    assert {f"{r.thread.model.provider}/{r.thread.model.id}" for r in thread.runHistory} == {"loop/loopback-model", "loop/model-b"}
    assert [m.text() for m in thread.messages] == ["Say hi"]  # the working thread is left as it was
    paths = sibling_paths(app.workspace, rel)
    md = paths["md"].read_text("utf-8")
    html = paths["html"].read_text("utf-8")
    assert "| Output | Good day. | model-b refuses" not in md
    assert "Hey &lt;b&gt;you&lt;/b&gt; &amp; co" in md and "Hey &lt;b&gt;you&lt;/b&gt; &amp; co" in html
    assert "<b>you</b>" not in html
    assert "refuses this prompt" in md
    assert len(load_results(app.workspace, rel).cells) == 4
    sent = len(srv.requests)

    srv.push(Turn(text="Very well."))
    again = rerun_failed(app.runner, rel)

    assert len(srv.requests) == sent + 1
    assert json.loads(json.dumps(srv.requests[-1].body_json))["model"] == "model-b"
    assert [c.status for c in again.cells] == ["completed"] * 4
    assert _cells(again)[("loop/model-b", "formal")].output == "Very well."
    assert _cells(again)[("loop/loopback-model", "formal")].run_id == cells[("loop/loopback-model", "formal")].run_id
    assert len(app.workspace.open(rel).runHistory) == 4
    with pytest.raises(UserFacingError, match="no failed cells"):
        rerun_failed(app.runner, rel)


def test_variant_values_reach_the_model(app, srv, rel):
    spec = MatrixSpec(models=MODELS[:1], variants=VARIANTS, concurrency=1)
    run_matrix(app.runner, rel, spec)
    bodies = [json.dumps(r.body_json) for r in srv.requests]
    assert any("formal tone" in b for b in bodies) and any("casual tone" in b for b in bodies)


def test_budget_stops_launching_before_it_would_be_exceeded(app, srv, rel):
    # each cell costs 100k in × $1/M + 50k out × $2/M = $0.20
    for _ in range(4):
        srv.push(Turn(text="ok", usage=(100_000, 50_000)))
    spec = MatrixSpec(models=MODELS, variants=VARIANTS, budget=0.5, concurrency=2)

    result = run_matrix(app.runner, rel, spec)

    statuses = [c.status for c in result.cells]
    assert statuses.count("completed") == 2 and statuses.count("skipped") == 2
    assert result.spent == pytest.approx(0.4)
    assert result.spent <= 0.5
    assert result.stopped_for_budget
    assert "Stopped early" in sibling_paths(app.workspace, rel)["md"].read_text("utf-8")
    assert len(srv.requests) == 2


def test_all_cells_run_concurrently_without_a_budget(app, srv, rel):
    spec = MatrixSpec(models=MODELS, variants=VARIANTS, repeat=2, concurrency=3)
    result = run_matrix(app.runner, rel, spec)
    assert [c.status for c in result.cells] == ["completed"] * 8
    assert len(app.workspace.open(rel).runHistory) == 8
    assert len(srv.requests) == 8


def test_unknown_providers_are_refused_before_anything_runs(app, srv, rel):
    with pytest.raises(UserFacingError):
        run_matrix(app.runner, rel, MatrixSpec(models=[("nowhere", "x")]))
    assert srv.requests == []


def test_parsing_models_and_variants(tmp_path):
    assert parse_models("a/b, c/d/e") == [("a", "b"), ("c", "d/e")]
    with pytest.raises(UserFacingError, match="PROVIDER/MODEL"):
        parse_models("gpt-4")
    f = tmp_path / "v.json"
    f.write_text('{"short": {"len": "short"}, "long": {"len": 2}}')
    assert parse_variants([str(f)]) == {"short": {"len": "short"}, "long": {"len": "2"}}
    f.write_text('[{"name": "x", "variables": {"a": "1"}}, {"b": "2"}]')
    assert parse_variants([str(f)]) == {"x": {"a": "1"}, "variant 2": {"b": "2"}}
    assert parse_variants(["tone=formal;lang=en"]) == {"tone=formal;lang=en": {"tone": "formal", "lang": "en"}}
    assert parse_variants([]) == {"default": {}}
    with pytest.raises(UserFacingError):
        parse_variants(["missing-file.json"])


def test_cli_matrix_then_rerun_failed(app, home, srv, rel, capsys):
    srv.push(Turn(text="one"), Turn(text="two"))
    srv.push_raw(status=400, body=BAD_REQUEST, headers={"Content-Type": "application/json"})
    srv.push(Turn(text="four"))
    code = main(["matrix", rel, "--models", "loop/loopback-model,loop/model-b", "--variants", "tone=formal",
                 "--variants", "tone=casual", "--concurrency", "1", "--budget", "5"])
    out = capsys.readouterr().out
    assert code == 1
    assert "[failed] loop/model-b | tone=formal | #1" in out
    assert "Matrix: 3 completed, 1 failed, 0 skipped" in out and "greet.matrix.html" in out
    srv.push(Turn(text="three"))
    assert main(["matrix", rel, "--rerun-failed"]) == 0
    out = capsys.readouterr().out
    assert out.count("[completed]") == 1 and "Matrix: 4 completed, 0 failed" in out

"""`llmspace traces …` end to end against a loopback model: the acceptance of issue 40 (the CLI
half) — an agent trace whose tool rows hang under an AGENT span, imported from a Langfuse export
and from an OTLP JSON file, gives the same thread, runs again, and `eval run` works on it — and
imported text that is never rendered as a template."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.cli import main
from llmspace.core.threadio import parse_thread
from tests.support.llm_server import LoopbackLLM, Turn, configure_provider
from tests.traces import shapes
from tests.traces.test_store import ORIGINAL_KEY, ORIGINAL_PROJECT, write_original_project


@pytest.fixture
def srv():
    with LoopbackLLM() as server:
        yield server


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _import(capsys, tmp_path: Path, name: str, value, project: str) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(value))
    code, out, err = _cli(capsys, "traces", "new", project)
    assert code == 0, err
    project_id = out.strip()
    code, out, err = _cli(capsys, "traces", "import", project, str(path))
    assert code == 0, out + err
    code, out, _err = _cli(capsys, "traces", "list", project)
    [key] = out.split()
    code, out, err = _cli(capsys, "traces", "open", project, key)
    assert code == 0, err
    rel = out.strip()
    assert rel == f"trace/{project_id}/{key}/workbench.json"
    return rel


def test_langfuse_and_otlp_imports_of_one_agent_trace_give_the_same_thread_which_runs_again_and_evaluates(home, app, srv, capsys, tmp_path):
    configure_provider(home, srv, model_id=shapes.MODEL)
    lf = _import(capsys, tmp_path, "langfuse.json", {"data": shapes.langfuse_rows()}, "from-langfuse")
    ot = _import(capsys, tmp_path, "otlp.json", shapes.otlp_document(shapes.otlp_spans()), "from-otlp")
    threads = [app.workspace.open(lf), app.workspace.open(ot)]
    first, second = (shapes.shape_of(t) for t in threads)
    assert first == second
    assert first["system"] == shapes.SYSTEM
    assert [m["role"] for m in first["messages"]] == ["user", "assistant", "assistant"]
    assert [c[1:4] for c in first["messages"][1]["calls"]] == [(n, a, r) for _i, n, a, r in shapes.CALLS]
    assert first["messages"][1]["tokens"] == (50, 20) and first["model"]["id"] == shapes.MODEL

    # It runs again against the loopback model, from its user turn.
    user_id = threads[0].messages[0].id
    srv.push(Turn(text="Paris: sunny. Rome: rain.", usage=(30, 6)))
    code, out, err = _cli(capsys, "run", lf, "--from", user_id)
    assert code == 0, err
    sent = srv.requests[-1].body_json
    texts = [json.dumps(m) for m in sent["messages"]]
    assert sum(shapes.SYSTEM in t for t in texts) == 1 and sum(shapes.QUESTION in t for t in texts) == 1
    saved = app.workspace.open(lf)
    assert saved.title == "weather agent" and saved.messages[-1].text() == "Paris: sunny. Rome: rain."
    assert len(saved.runHistory) == 2  # the imported entry and this run

    # `history` and `compare` take the workbench path too
    code, out, err = _cli(capsys, "history", lf, "--json")
    assert code == 0, err
    runs = [r["id"] for r in json.loads(out)["runs"]]
    assert len(runs) == 2 and runs[-1].startswith("imported-")
    code, out, err = _cli(capsys, "compare", lf, runs[-1], runs[0])
    assert code == 0, err
    assert "Paris: sunny. Rome: rain." in out and shapes.ANSWER in out

    # `eval new` / `eval run` take the workbench path; the results name the trace.
    dataset = app.workspace.root / "cases.jsonl"
    dataset.write_text(json.dumps({"expected": "sunny"}) + "\n")
    code, out, err = _cli(capsys, "eval", "new", lf, "--dataset", str(dataset))
    assert code == 0, out + err
    spec = app.workspace.resolve(lf).with_name("workbench.eval.yaml")
    assert spec.is_file()
    srv.push(Turn(text="It is sunny in Paris."))
    code, out, err = _cli(capsys, "eval", "run", str(spec), "--out", str(tmp_path / "results"))
    assert code == 0, out + err
    summary = json.loads((tmp_path / "results" / "summary.json").read_text())
    assert lf in json.dumps(summary)


def test_an_include_in_an_imported_user_turn_is_sent_literally_and_the_file_is_never_read(home, app, srv, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    secret = "SECRET-KEY-MATERIAL-0123456789"
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_rsa").write_text(secret)
    include = "{{@include('~/.ssh/id_rsa')}} for {{ city }} ({{ exists('~/.ssh/id_rsa') }})"
    rows = [{"id": "g1", "traceId": "t-include", "type": "GENERATION", "startTime": shapes.iso(shapes.T0), "model": shapes.MODEL,
             "input": [{"role": "user", "content": f"Summarise {include} please"}], "output": "ok"}]
    configure_provider(home, srv, model_id=shapes.MODEL)
    rel = _import(capsys, tmp_path, "lf.json", rows, "hostile")
    thread = app.workspace.open(rel)
    srv.push(Turn(text="Done."))
    code, _out, err = _cli(capsys, "run", rel, "--from", thread.messages[0].id)
    assert code == 0, err
    body = json.dumps(srv.requests[-1].body_json, ensure_ascii=False)
    assert secret not in body
    assert f"Summarise {include} please" in body  # sent exactly as imported


def test_a_project_written_by_the_original_opens_from_the_command_line_and_edits_are_kept(home, app, capsys):
    folder = write_original_project(app.trace_projects.root)
    code, out, _err = _cli(capsys, "traces", "projects")
    assert ORIGINAL_PROJECT in out and "Langfuse" in out and "Production" in out
    code, out, _err = _cli(capsys, "traces", "list", "Production")
    assert out.split() == [ORIGINAL_KEY]
    code, out, _err = _cli(capsys, "traces", "list", "Production", "--json")
    [record] = json.loads(out)
    assert (record["key"], record["title"], record["model"], record["status"]) == (ORIGINAL_KEY, "weather agent", shapes.MODEL, "ok")
    code, out, _err = _cli(capsys, "traces", "open", "Production", ORIGINAL_KEY)
    rel = out.strip()
    thread = app.workspace.open(rel)
    thread.context.systemPrompt = "edited"
    app.workspace.save(rel, thread)
    code, out, _err = _cli(capsys, "traces", "open", ORIGINAL_PROJECT, ORIGINAL_KEY)
    assert code == 0 and out.strip() == rel
    assert parse_thread((folder / "workbench.json").read_bytes()).context.systemPrompt == "edited"


def test_import_names_each_refused_file_with_its_reason_and_imports_the_others(home, capsys, tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(shapes.langfuse_rows()))
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    _cli(capsys, "traces", "new", "p")
    code, out, _err = _cli(capsys, "traces", "import", "p", str(good), str(bad))
    assert code == 1
    assert "imported good.json -> weather-agent-" in out
    assert "skipped bad.json: unsupported trace JSON shape" in out


def test_to_thread_copies_the_workbench_as_a_normal_thread_with_the_import_warning(home, app, capsys, tmp_path):
    rows = [{"id": "g1", "traceId": "t-copy", "type": "GENERATION", "startTime": shapes.iso(shapes.T0),
             "input": [{"role": "user", "content": "read {{@include('/etc/hostname')}}"}], "output": "ok"}]
    path = tmp_path / "lf.json"
    path.write_text(json.dumps(rows))
    _cli(capsys, "traces", "new", "p")
    _cli(capsys, "traces", "import", "p", str(path))
    key = _cli(capsys, "traces", "list", "p")[1].strip()
    code, out, err = _cli(capsys, "traces", "to-thread", "p", key, "--folder", "debug")
    assert code == 0, err
    rel = out.splitlines()[0]
    assert rel.startswith("debug/") and rel.endswith(".json")
    assert "would read these local files when run: /etc/hostname" in out
    copy = app.workspace.open(rel)
    assert "literal" not in copy.messages[0].extras()
    assert "importNotes" not in copy.extras()


def test_a_workbench_cannot_be_renamed_or_deleted_through_the_workspace_and_a_fork_goes_to_the_root(home, app, capsys, tmp_path):
    path = tmp_path / "lf.json"
    path.write_text(json.dumps(shapes.langfuse_rows()))
    _cli(capsys, "traces", "new", "p")
    _cli(capsys, "traces", "import", "p", str(path))
    key = _cli(capsys, "traces", "list", "p")[1].strip()
    rel = _cli(capsys, "traces", "open", "p", key)[1].strip()
    from llmspace.errors import UserFacingError

    with pytest.raises(UserFacingError, match="outside the workspace folder"):
        app.workspace.delete(rel)
    thread = app.workspace.open(rel)
    fork = app.workspace.fork_run(rel, thread.runHistory[0].id, thread.messages[0].id)
    assert fork == f"{key}-fork.json"


def test_remove_moves_a_trace_and_a_project_to_the_trash(home, capsys, tmp_path):
    path = tmp_path / "lf.json"
    path.write_text(json.dumps(shapes.langfuse_rows()))
    _cli(capsys, "traces", "new", "p")
    _cli(capsys, "traces", "import", "p", str(path))
    key = _cli(capsys, "traces", "list", "p")[1].strip()
    assert _cli(capsys, "traces", "remove", "p", key)[0] == 0
    assert _cli(capsys, "traces", "list", "p")[1] == ""
    code, out, _err = _cli(capsys, "traces", "remove", "p")
    assert code == 0 and "moved trace project p" in out
    assert "No trace projects yet" in _cli(capsys, "traces", "projects")[1]

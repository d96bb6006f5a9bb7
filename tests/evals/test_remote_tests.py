"""promptfoo's remote test sources against loopback servers speaking the real APIs: a
`huggingface://datasets/…` source is read page by page from the datasets server's `/rows` (split,
config, limit; a bearer token), its rows become cases that run against a loopback model, and the
snapshot kept under the data root makes later runs offline; a gated dataset without a token and
an unreachable server give clear errors before anything runs; `langfuse://traces?limit=N` reads N
traces from Langfuse's public API as cases; the compatibility page lists both sources."""

from __future__ import annotations

import json
import math
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

from llmspace.cli import main
from llmspace.errors import UserFacingError
from llmspace.evals import remote_sources, remote_tests
from llmspace.evals.dataset import load_dataset
from tests.evals.support import Oracle, write_thread
from tests.support.hf_datasets import DatasetsServer
from tests.support.llm_server import LoopbackLLM, configure_provider
from tests.traces.langfuse_server import PUBLIC_KEY, SECRET_KEY, LangfuseServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "promptfoo-compat.md"
TOKEN = "hf_loopbackTokenForGatedRows123"
HLE = "huggingface://datasets/cais/hle?split=test&limit=103"


def _rows(n: int) -> list[dict[str, Any]]:
    return [{"id": str(i), "question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(1, n + 1)]


def _setup(home: Path, srv: LoopbackLLM, tests: str) -> Path:
    """The thread quiz.json ({{question}}), pf/promptfooconfig.yaml with `tests: <tests>` and quiz.eval.yaml."""
    configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"])
    write_thread(home)
    ws = home / "workspace"
    (ws / "pf").mkdir(parents=True, exist_ok=True)
    config = {"description": "remote tests", "prompts": ["{{question}}"], "tests": tests,
              "defaultTest": {"assert": [{"type": "contains", "value": "{{answer}}"}]}}
    (ws / "pf" / "promptfooconfig.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    path = ws / "quiz.eval.yaml"
    path.write_text(yaml.safe_dump({"thread": "quiz.json", "dataset": "pf/promptfooconfig.yaml", "models": ["loop/good"]}),
                    encoding="utf-8")
    return path


def _results(home: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for folder in sorted((home / "evals" / "quiz").iterdir()):
        rows.extend(json.loads(line) for line in (folder / "results.jsonl").read_text("utf-8").splitlines())
    return rows


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Any:
    for name in ("HF_TOKEN", "HF_API_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    with DatasetsServer() as server:
        server.datasets[("cais/hle", "default", "test")] = _rows(105)
        monkeypatch.setenv("HF_DATASETS_SERVER", server.url)
        yield server


def test_a_hugging_face_split_is_read_page_by_page_up_to_its_limit_and_its_rows_run_as_cases(home, srv, oracle: Oracle,
                                                                                              hub, capsys):
    path = _setup(home, srv, HLE)

    code = main(["eval", "run", str(path)])

    assert code == 0, capsys.readouterr().err
    pages = [(q["dataset"], q["split"], q["config"], q["offset"], q["length"]) for q in hub.requests]
    assert pages == [("cais/hle", "test", "default", "0", "100"), ("cais/hle", "test", "default", "100", "3")]
    rows = _results(home)
    assert len(rows) == 103 and {r["status"] for r in rows} == {"pass"}
    assert oracle.model_calls("good") == 103
    assert oracle.calls[("good", "What is 103 + 1?")] == 1 and oracle.calls[("good", "What is 104 + 1?")] == 0
    case = load_dataset(home / "workspace" / "pf" / "promptfooconfig.yaml").cases[0]
    assert case.values == {"id": "1", "question": "What is 1 + 1?", "answer": "2"}  # the row's fields are the vars


def test_a_later_run_reads_the_snapshot_and_fetches_nothing_even_offline(home, srv, oracle, hub, monkeypatch, capsys):
    path = _setup(home, srv, HLE)
    assert main(["eval", "run", str(path)]) == 0, capsys.readouterr().err
    fetched = len(hub.requests)
    snapshot = remote_tests.snapshot_path(HLE)
    assert snapshot.is_file() and snapshot.is_relative_to(home / "cache")
    monkeypatch.setenv("HF_DATASETS_SERVER", _closed_port_url())  # nothing answers there any more

    assert main(["eval", "run", str(path)]) == 0, capsys.readouterr().err

    assert len(hub.requests) == fetched
    (latest,) = sorted((home / "evals" / "quiz").iterdir())[-1:]
    notes = json.loads((latest / "summary.json").read_text("utf-8"))["notes"]
    assert any(str(snapshot) in n and "delete that file to fetch them again" in n for n in notes)
    snapshot.unlink()  # deleting the snapshot fetches again: here the server is gone, so it says so
    assert main(["eval", "run", str(path)]) == 2
    assert "There is no snapshot of it yet" in capsys.readouterr().err


def test_a_gated_dataset_without_a_token_is_refused_saying_to_set_hf_token_and_runs_with_one(home, srv, oracle, hub,
                                                                                            monkeypatch, capsys):
    hub.require_token = TOKEN
    path = _setup(home, srv, "huggingface://datasets/cais/hle?split=test&limit=3")

    assert main(["eval", "run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "cais/hle" in err and "HTTP 401" in err and "HF_TOKEN" in err
    assert oracle.model_calls("good") == 0 and not (home / "evals" / "quiz").exists()
    assert main(["eval", "new", "quiz.json", "--dataset", str(home / "workspace" / "pf" / "promptfooconfig.yaml"),
                 "--models", "loop/good"]) == 2  # eval new says so too

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert main(["eval", "run", str(path)]) == 0, capsys.readouterr().err
    assert hub.requests[-1].get("length") == "3" and len(_results(home)) == 3
    assert TOKEN not in remote_tests.snapshot_path("huggingface://datasets/cais/hle?split=test&limit=3").read_text("utf-8")


@pytest.mark.parametrize("setting", ["unreachable", "HF_HUB_OFFLINE"])
def test_with_no_network_and_no_snapshot_the_source_is_refused_before_any_call(home, srv, oracle, hub, monkeypatch,
                                                                               capsys, setting):
    if setting == "unreachable":
        monkeypatch.setenv("HF_DATASETS_SERVER", _closed_port_url())
    else:
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    path = _setup(home, srv, HLE)

    assert main(["eval", "run", str(path)]) == 2

    err = capsys.readouterr().err
    assert HLE in err and ("Could not fetch" in err if setting == "unreachable" else "HF_HUB_OFFLINE" in err)
    assert oracle.model_calls("good") == 0 and not remote_tests.snapshot_path(HLE).exists()


def test_an_unknown_split_and_an_answer_that_is_not_rows_are_clear_errors(home, hub, tmp_path):
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("tests: huggingface://datasets/cais/hle?split=validation\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"no dataset cais/hle with the split 'validation'.*HTTP 404"):
        load_dataset(config)
    hub.answer = lambda path, q, auth: (200, {"rows": "nope"}, {})  # type: ignore[method-assign]
    config.write_text("tests: huggingface://datasets/cais/hle?split=test&limit=2\n", encoding="utf-8")
    with pytest.raises(Exception, match="is not a page of rows"):
        load_dataset(config)


def test_a_source_over_the_row_cap_is_refused_and_nothing_of_it_is_kept(home, hub, tmp_path, monkeypatch):
    monkeypatch.setattr(remote_sources, "MAX_ROWS", 150)  # the cap, lowered so a loopback dataset passes it
    hub.datasets[("cais/hle", "default", "test")] = _rows(300)
    config = tmp_path / "promptfooconfig.yaml"
    spec = "huggingface://datasets/cais/hle?split=test"
    config.write_text(f"tests: {spec}\n", encoding="utf-8")
    with pytest.raises(UserFacingError, match="holds more than 150 tests"):
        load_dataset(config)
    assert len(hub.requests) == 2 and not remote_tests.snapshot_path(spec).exists()


def test_a_damaged_snapshot_is_refused_saying_to_delete_it(home, hub, tmp_path):
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(f"tests: {HLE}\n", encoding="utf-8")
    assert len(load_dataset(config).cases) == 103
    remote_tests.snapshot_path(HLE).write_text('{"url": "elsewhere", "tests": []}', encoding="utf-8")
    with pytest.raises(UserFacingError, match="is damaged") as info:
        load_dataset(config)
    assert "Delete it" in info.value.hint


# -- Langfuse --------------------------------------------------------------------------------


class LangfuseTraces(LangfuseServer):
    """The loopback Langfuse answering `GET /api/public/traces` with `fields=core,io,metrics` as
    Langfuse does: trace objects with `input`/`output`, page-based (`page`, `limit`, `meta.totalPages`)."""

    def __init__(self, traces: list[dict[str, Any]]) -> None:
        super().__init__()
        self.trace_list = traces

    def traces(self, q: dict[str, str]) -> dict[str, Any]:
        limit, page = int(q["limit"]), int(q.get("page", "1"))
        items = self.trace_list[(page - 1) * limit: page * limit]
        if "io" not in q.get("fields", "core,io").split(","):
            items = [{k: v for k, v in t.items() if k not in ("input", "output")} for t in items]
        total = len(self.trace_list)
        return {"data": items, "meta": {"page": page, "limit": limit, "totalItems": total,
                                        "totalPages": math.ceil(total / limit)}}


def _traces(n: int) -> list[dict[str, Any]]:
    return [{"id": f"trace-{i}", "name": "quiz bot", "timestamp": f"2026-03-0{i}T10:00:00.000Z", "userId": "u-7",
             "tags": ["prod"], "htmlPath": f"/project/p/traces/trace-{i}", "latency": 1.5, "totalCost": 0.0002,
             "input": {"messages": [{"role": "system", "content": "Answer."}, {"role": "user", "content": f"What is {i} + 1?"}]},
             "output": {"choices": [{"message": {"role": "assistant", "content": str(i + 1)}}]}}
            for i in range(1, 5)][:n]


def test_langfuse_traces_with_a_limit_become_that_many_cases_that_run(home, srv, oracle, monkeypatch, capsys):
    server = LangfuseTraces(_traces(4))
    import threading

    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC_KEY)
        monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET_KEY)
        monkeypatch.setenv("LANGFUSE_HOST", server.url)
        monkeypatch.delenv("LANGFUSE_BASE_URL", raising=False)
        path = _setup(home, srv, "langfuse://traces?limit=2")
        config = home / "workspace" / "pf" / "promptfooconfig.yaml"
        data = yaml.safe_load(config.read_text("utf-8"))
        data["prompts"], data["defaultTest"] = ["{{input}}"], {"assert": [{"type": "equals", "value": "{{output}}"}]}
        config.write_text(yaml.safe_dump(data), encoding="utf-8")
        write_thread(home, text="{{input}}")

        assert main(["eval", "run", str(path)]) == 0, capsys.readouterr().err

        asked = [q for p, q in server.requests if p == "/api/public/traces"]
        assert [(q["limit"], q["fields"]) for q in asked] == [("2", "core,io,metrics")]
        rows = _results(home)
        assert len(rows) == 2 and {r["status"] for r in rows} == {"pass"}
        cases = load_dataset(config).cases
        assert [c.description for c in cases] == ["Trace: quiz bot (2026-03-01)", "Trace: quiz bot (2026-03-02)"]
        first = cases[0].values
        assert first["input"] == "What is 1 + 1?" and first["output"] == "2" and first["__langfuse_trace_id"] == "trace-1"
        assert first["__langfuse_url"] == server.url + "/project/p/traces/trace-1" and first["__langfuse_tags"] == ["prod"]
        (folder,) = (home / "evals" / "quiz").iterdir()
        notes = json.loads((folder / "summary.json").read_text("utf-8"))["notes"]
        assert any("the models answer each trace's `input`" in n for n in notes)

        monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-wrong")  # a new source (another limit) with wrong keys
        data["tests"] = "langfuse://traces?limit=3"
        config.write_text(yaml.safe_dump(data), encoding="utf-8")
        assert main(["eval", "run", str(path)]) == 2
        err = capsys.readouterr().err
        assert "Langfuse rejected the keys (HTTP 401)" in err and "LANGFUSE_PUBLIC_KEY" in err and "sk-lf-wrong" not in err
    finally:
        server.released.set()
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join(30)


def test_the_compatibility_page_lists_every_remote_source_with_its_status():
    text = DOC.read_text("utf-8")
    assert "\n## Remote test sources\n" in text
    section = text.split("\n## Remote test sources\n", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("|")[1].strip().strip("`"): line.split("|")[2].strip()
            for line in section.splitlines() if line.startswith("| `")}
    assert rows == {source: status for source, (status, _what) in remote_tests.SOURCES.items()}

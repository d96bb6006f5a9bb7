"""Assertion types that need a service evaluations do not have (issue 42, item 3): `moderation`,
`classifier` and `trace-*` are refused with the reason before any request; `--skip-unsupported`
(on `eval run`, or written by `eval new`) runs the rest and names each skipped assertion in the
printed summary, summary.json and report.html."""

from __future__ import annotations

import json

import yaml

from llmspace.cli import main
from llmspace.evals.assertion_types import refusal_reason
from tests.evals.support import write_eval


def _tests_file(home) -> str:
    ws = home / "workspace"
    tests = [{"vars": {"question": "What is 2 + 5?"},
              "assert": [{"type": "equals", "value": "7"}, {"type": "moderation"}, {"type": "trace-span-count", "value": 1}]},
             {"vars": {"question": "What is 1 + 1?"}, "assert": [{"type": "icontains", "value": "2"}]}]
    (ws / "tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")
    return str(ws / "tests.yaml")


def test_each_refused_type_says_which_service_it_needs():
    assert "moderation service" in refusal_reason("moderation")
    assert "classification model" in refusal_reason("not-classifier")
    assert "trace" in refusal_reason("trace-span-duration")


def test_a_file_with_unsupported_assertions_is_refused_with_the_reason_before_any_request(home, srv, capsys):
    path = write_eval(home, srv, [], assertions=[])

    assert main(["eval", "run", str(path), "--dataset", _tests_file(home)]) == 2

    err = capsys.readouterr().err
    assert "moderation (it needs a moderation service" in err and "trace-span-count (it checks the OpenTelemetry trace" in err
    assert "--skip-unsupported" in err
    assert srv.requests == []


def test_skip_unsupported_runs_the_rest_and_names_each_skipped_assertion(home, srv, capsys):
    path = write_eval(home, srv, [], assertions=[])

    assert main(["eval", "run", str(path), "--dataset", _tests_file(home), "--skip-unsupported"]) == 0

    out = capsys.readouterr().out
    assert "Skipped assertion moderation (1 case): it needs a moderation service" in out
    assert "Skipped assertion trace-span-count (1 case)" in out
    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    summary = json.loads((folder / "summary.json").read_text("utf-8"))
    assert [s["assertion"] for s in summary["skipped"]] == ["moderation", "trace-span-count"]
    assert all(len(s["cases"]) == 1 and s["reason"] for s in summary["skipped"])
    report = (folder / "report.html").read_text("utf-8")
    assert "Skipped assertions" in report and "moderation" in report
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text("utf-8").splitlines()]
    assert sorted(c["assertion"].split()[0] for r in rows for c in r["checks"]) == ["equals", "icontains"]


def test_eval_new_with_skip_unsupported_writes_a_file_whose_runs_leave_them_out(home, srv, capsys):
    write_eval(home, srv, [], assertions=[])
    tests = _tests_file(home)
    out = home / "workspace" / "pf.eval.yaml"

    assert main(["eval", "new", "quiz.json", "--dataset", tests, "--skip-unsupported", "-o", str(out)]) == 0

    assert yaml.safe_load(out.read_text("utf-8"))["skipUnsupported"] is True
    assert main(["eval", "run", str(out)]) == 0
    assert "Skipped assertion moderation" in capsys.readouterr().out

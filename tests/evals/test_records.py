"""The records of a dataset evaluation have one schema: journal lines and result rows read
back as they were written, and no module but `evals/records.py` looks a record's field up
with `.get(` (a static scan of the modules that handle them)."""

from __future__ import annotations

import ast
from pathlib import Path

from llmspace.evals.records import (
    CellRecord,
    End,
    Header,
    JudgeRecord,
    parse_record,
    parse_row,
    record_data,
    row_data,
)

ROOT = Path(__file__).resolve().parents[2]
CELL = {"type": "cell", "key": "c1|p/m|default|#1", "case": "c1", "model": "p/m", "variant": "default", "repeat": 1,
        "output": "4", "toolCalls": [{"name": "add", "arguments": {"a": 2}}],
        "usage": {"input": 10, "output": 2, "totalTokens": 12, "cacheRead": 0}, "cost": 0.001, "latencyMs": 120.5,
        "firstTokenMs": 40.0, "finish": "stop", "error": None, "cached": False,
        "checks": [{"assertion": "contains", "pass": True, "weight": 1.0}], "finishedAt": 1700000000000}
JUDGE = {"type": "judge", "key": "c1|p/m|default|#1|judge:p/j|abc|1", "cell": "c1|p/m|default|#1", "assertion": 1,
         "judgeModel": "p/j", "promptHash": "abc", "repeat": 1, "prompt": "Grade", "raw": '{"correct": 5}', "usage": None,
         "cost": 0.0, "cached": True, "latencyMs": None, "finishedAt": 1700000000001, "scores": {"correct": 5.0},
         "reason": "right", "check": {"assertion": "llm-rubric", "pass": True, "weight": 1.0, "score": 5.0}}
HEADER = {"type": "header", "version": 1, "name": "quiz", "evalFile": "/w/quiz.eval.yaml", "thread": "quiz.json",
          "dataset": "/w/cases.csv", "hashes": {"thread": "t"}, "createdAt": 1700000000000}
ROW = {"key": "c1|p/m|default|#1", "case": "c1", "model": "p/m", "variant": "default", "repeat": 1, "status": "fail",
       "score": 0.0, "output": "5", "toolCalls": [], "failed": ["contains"],
       "checks": [{"assertion": "contains", "pass": False, "weight": 1.0, "reason": "no 4"}],
       "judges": [{"judgeModel": "p/j", "promptHash": "abc", "scores": None, "reason": None, "raw": "?",
                   "error": "unreadable", "cost": 0.0}],
       "cost": 0.001, "inputTokens": 10, "outputTokens": 2, "latencyMs": 120.5, "cached": False, "error": None}

# Modules that handle journal records or result rows, and the names in them that hold other
# JSON (the summary, a rendered request, a judge's answer, a thread) read with `.get(`.
CONSUMERS = {
    "llmspace/evals/results.py": {"group"},
    "llmspace/evals/run.py": set(),
    "llmspace/evals/cell.py": {"m", "c", "t", "data"},  # the request a cell carries (`request_data`)
    "llmspace/evals/judge.py": {"data"},  # the judge's JSON answer
    "llmspace/evals/journal.py": set(),
    "llmspace/evals/pool.py": set(),
    "llmspace/evals/ray_pool.py": set(),
    "llmspace/evals/ray_tasks.py": set(),
    "llmspace/evals/cache.py": set(),
    "llmspace/evals/report.py": {"g", "r", "summary", "tokens", "lat"},  # summary.json and its groups
    "llmspace/evals/compare.py": {"summary", "self.summary"},
    "llmspace/evals/compare_format.py": {"g", "s"},
    "llmspace/presenters/eval_grid.py": {"context"},  # the thread's data
    "llmspace/presenters/eval_compare.py": set(),
}
FIELDS = ({k for d in (CELL, JUDGE, HEADER, ROW) for k in d} | {"type", "pass", "lostCost", "attempts", "turns", "transcript"})


def test_journal_records_read_back_as_they_were_written():
    for data in (CELL, JUDGE, HEADER, {"type": "end", "finishedAt": 1}):
        record = parse_record(data)
        assert record is not None and record_data(record) == data
    assert isinstance(parse_record(CELL), CellRecord) and isinstance(parse_record(JUDGE), JudgeRecord)
    assert isinstance(parse_record(HEADER), Header) and isinstance(parse_record({"type": "end"}), End)


def test_a_record_of_an_unknown_kind_is_left_out_and_missing_fields_take_their_defaults():
    assert parse_record({"type": "note", "text": "from a later version"}) is None
    cell = parse_record({"type": "cell", "key": "k", "error": "HTTP 500"})
    assert isinstance(cell, CellRecord)
    assert (cell.error, cell.cost, cell.repeat, cell.variant, cell.checks, cell.reply.output) == ("HTTP 500", 0.0, 1, "default", (), "")


def test_result_rows_read_back_as_they_were_written():
    assert row_data(parse_row(ROW)) == ROW


def _gets(path: Path) -> list[tuple[int, str, str]]:
    """(line, receiver, key) of every `X.get("key", …)` call in a module."""
    out = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            out.append((node.lineno, ast.unparse(node.func.value), node.args[0].value))
    return out


def test_no_module_but_the_parser_reads_a_record_field_with_get():
    found: list[str] = []
    for rel, others in CONSUMERS.items():
        path = ROOT / rel
        assert path.is_file(), f"{rel} is gone: update CONSUMERS"
        found += [f"{rel}:{line} {who}.get({key!r})" for line, who, key in _gets(path) if key in FIELDS and who not in others]
    assert found == [], "records read with .get( outside llmspace/evals/records.py:\n" + "\n".join(found)

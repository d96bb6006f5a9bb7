"""Test support for evaluations: a deterministic model oracle for the loopback server and the
files of an evaluation (models.json, thread, dataset, evaluation file) under a data root.

    oracle = Oracle()                     # answers arithmetic and extraction prompts
    srv.responder = oracle                # LoopbackLLM consults it when nothing is queued
    write_eval(home, srv, cases, assertions=[…], judge="loop/judge")

Models (all on provider `loop`, Chat Completions): `good` answers every case right, `bad`
gets arithmetic wrong when the sum is a multiple of 4, `judge` answers the grader prompt
with `oracle.judge_answer` (fixed scores; set it to anything to script a malformed judge).
`oracle.calls` counts requests per (model, prompt) so a test can prove which cells ran.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from llmspace.core.threadio import serialize_thread, thread_from_data
from llmspace.evals.journal import JournalRead
from llmspace.evals.records import record_data
from tests.support.llm_server import LoopbackLLM, RawResponse, Turn, configure_provider

ARITH = re.compile(r"What is (\d+) \+ (\d+)\?")
EXTRACT = re.compile(r"Extract as JSON: (\w+) is (\d+) years old\.")
GRADER = "You are a strict, fair grader"


def journal_lines(read: JournalRead) -> list[dict[str, Any]]:
    """A journal's records as the JSON objects of its lines (what the tests check)."""
    return [record_data(r) for r in read.records]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def last_user(body: dict[str, Any]) -> str:
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            return _text(m.get("content"))
    return ""


def is_judge(body: dict[str, Any]) -> bool:
    return any(m.get("role") == "system" and GRADER in _text(m.get("content")) for m in body.get("messages") or [])


class Oracle:
    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        self.judge_answer = '{"scores": {"correct": 5, "concise": 4}, "reason": "Right and short."}'
        self.delay_per_chunk = 0.0
        self.fail_first: dict[str, int] = {}  # model -> how many of its first requests get a 429
        self._lock = threading.Lock()

    def answer(self, model: str, prompt: str) -> str:
        m = ARITH.search(prompt)
        if m:
            total = int(m.group(1)) + int(m.group(2))
            if model == "bad" and total % 4 == 0:
                total += 1
            return str(total)
        m = EXTRACT.search(prompt)
        if m:
            return json.dumps({"name": m.group(1), "age": int(m.group(2))})
        return "ok"

    def __call__(self, kind: str, body: Any) -> Any:
        body = body if isinstance(body, dict) else {}
        model = str(body.get("model", ""))
        prompt = last_user(body)
        with self._lock:
            self.calls[(model, prompt)] += 1
            if self.fail_first.get(model, 0) > 0:
                self.fail_first[model] -= 1
                return RawResponse(status=429, headers={"Retry-After": "0.2"},
                                   body=b'{"error": {"message": "Rate limit reached", "type": "rate_limit"}}')
        if is_judge(body):
            return Turn(text=self.judge_answer, usage=(50, 10), chunk_size=16, delay_per_chunk=self.delay_per_chunk)
        return Turn(text=self.answer(model, prompt), usage=(20, 3), chunk_size=8, delay_per_chunk=self.delay_per_chunk)

    def model_calls(self, model: str) -> int:
        return sum(n for (m, p), n in self.calls.items() if m == model and not p.startswith("## Task"))

    def judge_calls(self) -> int:
        return sum(n for (m, _p), n in self.calls.items() if m == "judge")


def arithmetic_and_extraction(n: int = 40) -> list[dict[str, Any]]:
    """`n` cases: half arithmetic (expected the sum), half extraction (expected the name)."""
    names = ["Ada", "Bob", "Cyd", "Dee", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon"]
    rows: list[dict[str, Any]] = []
    for i in range(n // 2):
        a, b = i + 1, 2 * i + 3
        rows.append({"id": f"add-{i + 1}", "question": f"What is {a} + {b}?", "expected": str(a + b), "kind": "arithmetic"})
    for i in range(n - n // 2):
        name = names[i % len(names)] + str(i)
        name = re.sub(r"\d", "", name) + "x" * (i // len(names))
        rows.append({"id": f"extract-{i + 1}", "question": f"Extract as JSON: {name} is {20 + i} years old.",
                     "expected": name, "kind": "extraction"})
    return rows


def write_thread(home: Path, rel: str = "quiz.json", system: str = "Answer briefly.", text: str = "{{question}}",
                 **extra: Any) -> Path:
    path = home / "workspace" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"title": path.stem, "context": {"systemPrompt": system,
                                            "messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": text}]}],
                                            **extra}}
    path.write_bytes(serialize_thread(thread_from_data(data)))
    return path


def write_eval(home: Path, srv: LoopbackLLM, rows: list[dict[str, Any]], *, models: tuple[str, ...] = ("loop/good",),
               assertions: list[Any] | None = None, dataset_name: str = "cases.jsonl", **fields: Any) -> Path:
    """models.json, the thread `quiz.json`, the dataset and `quiz.eval.yaml` beside them; returns the eval file."""
    configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"])
    write_thread(home)
    ws = home / "workspace"
    dataset = ws / dataset_name
    if dataset_name.endswith(".jsonl"):
        dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        dataset.write_text(json.dumps(rows), encoding="utf-8")
    spec: dict[str, Any] = {"thread": "quiz.json", "dataset": dataset_name, "models": list(models), "repeat": 1,
                            "assert": assertions if assertions is not None else [{"type": "contains"}], **fields}
    path = ws / "quiz.eval.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path

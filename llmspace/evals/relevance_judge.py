"""Grading one `answer-relevance` assertion: the judge call that writes the questions the output
answers (`evals/relevance.py`), then the mean cosine similarity of their embeddings with the
query's, from the evaluation's embedding model, scored by promptfoo's rule (default threshold 0).
The result is a judge record like every model-graded assertion's (journaled, resumed, reported).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .assertions import Assertion, Check
from .embeddings import EmbeddingError
from .judge import JUDGE_REPEAT, judge_key, prompt_hash
from .records import CellRecord, JudgeRecord
from .relevance import ANSWER_THRESHOLD, prompt, query_of, questions

if TYPE_CHECKING:
    from collections.abc import Callable

    from .embeddings import Embedder
    from .judge import Judge
    from .plan import Cell
    from .records import Reply


def run_answer_relevance(judge: Judge, embedder: Embedder | None, cell: Cell, index: int, assertion: Assertion,
                         record: CellRecord, judged: set[str],
                         ask: Callable[[str, dict[str, Any], int], Reply | None]) -> JudgeRecord | None:
    """The judge record of one answer-relevance assertion (None when journaled already or stopped)."""
    output = record.reply.output
    system, text = prompt("answer-relevance", cell.task, output, cell.vars)
    phash = prompt_hash(system, text)
    key = judge_key(cell.key, judge.model, phash)
    if key in judged:
        return None
    reply = ask(judge.model, {"system": system, "messages": [{"role": "user", "text": text}], "tools": [], "params": None},
                JUDGE_REPEAT)
    if reply is None:
        return None
    rec = JudgeRecord(key, cell.key, index, judge.model, phash, JUDGE_REPEAT, text, reply.output, reply.usage, reply.cost,
                      reply.cached, reply.latency_ms, int(time.time() * 1000))
    if reply.error:
        return replace(rec, error=f"judge call failed: {reply.error}")
    try:
        asked = questions(rec.raw)
    except ValueError as exc:
        return replace(rec, error=f"the judge's answer could not be read ({exc})")
    if embedder is None:
        why = "answer-relevance needs an embedding model: give --embedder PROVIDER/MODEL or embedder: in the file"
        return replace(rec, reason=why, check=Check(assertion.label, False, assertion.weight, why))
    query = query_of(cell.task, cell.vars)
    try:
        similarities = embedder.similarity(query, asked)
    except EmbeddingError as exc:
        return replace(rec, reason=str(exc), check=Check(assertion.label, False, assertion.weight, str(exc)))
    score = sum(similarities) / len(similarities)
    bound = ANSWER_THRESHOLD if assertion.threshold is None else assertion.threshold
    passed = score >= bound - 1e-12
    why = f"relevance {score:.2f} {'≥' if passed else '<'} {bound:g} (questions: " + " | ".join(asked) + ")"
    return replace(rec, scores={"answer-relevance": round(score, 4)}, reason=why,
                   check=Check(assertion.label, passed, assertion.weight, "" if passed else why, round(score, 4)))

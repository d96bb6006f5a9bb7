"""promptfoo's model-graded assertion types, graded by the evaluation's judge model: the prompt
each one asks and how its answer is scored (promptfoo's rules). Pure: no I/O.

- `factuality` (and `model-graded-factuality`): the output is compared with the value, the
  reference answer, and put in one of OpenAI's five categories — (A) a consistent subset,
  (B) a consistent superset, (C) the same details, (D) a disagreement, (E) different but not
  in a way that matters; each passes with score 1 but (D), which fails with 0.
- `model-graded-closedqa`: does the output meet the criterion (the value)? The judge reasons,
  then answers Y or N on the last line; Y passes (score 1).
- `context-faithfulness`, `context-recall`, `context-relevance` (the case's `context`
  variable is the retrieved context): the share of the output's statements the context
  supports, of the reference's sentences (the value, else `expected`) the context holds, of
  the context's sentences the query needs — counted by the judge in one answer (promptfoo asks
  per statement), passing at the threshold (default 0.7);
- `g-eval`: the judge derives evaluation steps from the criteria (the value: a text or a list)
  and scores the output 0–10 in the same answer (promptfoo asks twice); the score is that over
  10, passing at the threshold (default 0.7).
- `answer-relevance`, `conversation-relevance`: `evals/relevance.py` (the first also needs the
  evaluation's embedding model: `evals/relevance_judge.py` grades it).

`prompt(kind, value, task, output, expected)` -> (system, user text); `grade(kind, answer,
threshold)` -> (pass, score 0–1, reason), raising ValueError for an answer that cannot be read
(the judge record then holds the error; the cell is neither passed nor failed).
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import relevance

KINDS = ("factuality", "model-graded-factuality", "model-graded-closedqa", "g-eval", "context-faithfulness",
         "context-recall", "context-relevance", *relevance.KINDS)
CONTEXT_KINDS = ("context-faithfulness", "context-recall", "context-relevance")
G_EVAL_THRESHOLD = 0.7
CONTEXT_THRESHOLD = 0.7  # the context types' default threshold on their 0–1 share
FACTUALITY_SCORES = {"A": 1.0, "B": 1.0, "C": 1.0, "D": 0.0, "E": 1.0}
_CATEGORIES = {"A": "the submitted answer is a subset of the expert answer and fully consistent with it",
               "B": "the submitted answer is a superset of the expert answer and fully consistent with it",
               "C": "the submitted answer contains all the same details as the expert answer",
               "D": "there is a disagreement between the submitted answer and the expert answer",
               "E": "the answers differ, but these differences don't matter from the perspective of factuality"}
_SYSTEMS = {
    "factuality": "You compare the factual content of a submitted answer with an expert answer. Reply with JSON only.",
    "model-graded-closedqa": "You assess whether a submitted answer meets a criterion. Reason step by step, then answer.",
    "g-eval": "You evaluate a model's answer on the given criteria. Reply with JSON only.",
}
_LETTER = re.compile(r"\(?\b([A-E])\b\)?")


def _criteria_text(value: Any) -> str:
    return "\n".join(f"- {v}" for v in value) if isinstance(value, list) else str(value)


def prompt(kind: str, value: Any, task: str, output: str, expected: str | None,
           variables: dict[str, Any] | None = None) -> tuple[str, str]:
    """(system, user text) of the judge call for one assertion."""
    if kind in relevance.KINDS:
        return relevance.prompt(kind, task, output, variables)
    task = task.strip() or "(empty)"
    output = output.strip() or "(empty)"
    if kind in CONTEXT_KINDS:
        return _context_prompt(kind, value, task, output, expected, str((variables or {}).get("context") or "(none)"))
    if kind in ("factuality", "model-graded-factuality"):
        reference = str(value) if value is not None else (expected or "")
        options = "\n".join(f"({k}) {v}" for k, v in _CATEGORIES.items())
        text = (f"[Question]: {task}\n[Expert answer]: {reference}\n[Submitted answer]: {output}\n\n"
                "Compare the factual content of the submitted answer with the expert answer; ignore differences in "
                "style, grammar or punctuation. Which case applies?\n" + options + "\n\n"
                'Answer with JSON only: {"category": "<A, B, C, D or E>", "reason": "<one sentence>"}')
        return _SYSTEMS["factuality"], text
    if kind == "model-graded-closedqa":
        text = (f"[Task]: {task}\n[Submission]: {output}\n[Criterion]: {value}\n\n"
                "Does the submission meet the criterion? First write out, step by step, your reasoning about the "
                "criterion, so that the conclusion is clearly right. Then print only the single letter Y or N on its "
                "own line, and at the end repeat just that letter on a line of its own.")
        return _SYSTEMS[kind], text
    if kind == "g-eval":
        text = (f"## Criteria\n{_criteria_text(value)}\n\n## Task given to the model\n{task}\n\n## The model's answer\n"
                f"{output}\n\nFirst derive three to five evaluation steps from the criteria, then follow them and score "
                "the answer from 0 (it meets none of the criteria) to 10 (it meets all of them fully). Answer with JSON "
                'only: {"steps": ["..."], "score": <0-10>, "reason": "<one or two sentences>"}')
        return _SYSTEMS[kind], text
    raise ValueError(f"not a model-graded type: {kind}")


def _context_prompt(kind: str, value: Any, task: str, output: str, expected: str | None, context: str) -> tuple[str, str]:
    head = f"[Context]: {context}\n"
    if kind == "context-faithfulness":
        body = (f"{head}[Answer]: {output}\n\nBreak the answer into its factual statements and decide, for each, "
                "whether the context supports it.")
        keys = '{"total": <statements>, "count": <statements the context supports>, "reason": "<one sentence>"}'
    elif kind == "context-recall":
        reference = str(value) if value is not None else (expected or "")
        body = (f"{head}[Reference answer]: {reference}\n\nFor each sentence of the reference answer, decide whether "
                "the context holds the information it states.")
        keys = '{"total": <sentences of the reference>, "count": <those the context holds>, "reason": "<one sentence>"}'
    else:
        body = (f"[Query]: {task}\n{head}\nDecide, for each sentence of the context, whether it is needed to answer "
                "the query.")
        keys = '{"total": <sentences of the context>, "count": <those needed>, "reason": "<one sentence>"}'
    return "You judge retrieved context. Reply with JSON only.", f"{body} Answer with JSON only: {keys}"


def _share(answer: str, threshold: float | None) -> tuple[bool, float, str]:
    data = _json_object(answer)
    total, count = data.get("total"), data.get("count")
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in (total, count)) or count > total:  # type: ignore[operator]
        raise ValueError(f"the answer's counts {count!r} of {total!r} are not whole numbers with count ≤ total")
    score = count / total if total else 0.0
    bound = CONTEXT_THRESHOLD if threshold is None else threshold
    reason = str(data.get("reason") or "")
    passed = score >= bound - 1e-12
    return passed, score, reason if passed else f"{count} of {total} ({score:.2f}) < {bound:g}: {reason}"


def _json_object(answer: str) -> dict[str, Any]:
    start, end = answer.find("{"), answer.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("the answer holds no JSON object")
    try:
        data = json.loads(answer[start:end + 1])
    except (ValueError, RecursionError):
        raise ValueError("the answer's JSON does not parse") from None
    if not isinstance(data, dict):
        raise ValueError("the answer is not a JSON object")
    return data


def grade(kind: str, answer: str, threshold: float | None) -> tuple[bool, float, str]:
    """(pass, score from 0 to 1, reason) of the judge's answer; ValueError when it cannot be read."""
    if kind in ("factuality", "model-graded-factuality"):
        try:
            data = _json_object(answer)
            letter = str(data.get("category", "")).strip().strip("()").upper()[:1]
            reason = str(data.get("reason") or "")
        except ValueError:
            m = _LETTER.search(answer)
            letter, reason = (m.group(1), "") if m else ("", "")
        if letter not in FACTUALITY_SCORES:
            raise ValueError("the answer names no category A to E")
        score = FACTUALITY_SCORES[letter]
        passed = score > 0 and (threshold is None or score >= threshold - 1e-12)
        why = f"({letter}) {_CATEGORIES[letter]}" + (f": {reason}" if reason else "")
        return passed, score, why
    if kind == "model-graded-closedqa":
        lines = [line.strip().strip(".*\"'").upper() for line in answer.strip().splitlines() if line.strip()]
        last = lines[-1] if lines else ""
        if last not in ("Y", "N"):
            raise ValueError("the answer does not end with Y or N")
        reasoning = " ".join(answer.strip().splitlines()[:-1]).strip()
        return last == "Y", 1.0 if last == "Y" else 0.0, "" if last == "Y" else f"the criterion is not met: {reasoning[:300]}"
    if kind in CONTEXT_KINDS:
        return _share(answer, threshold)
    if kind == "conversation-relevance":
        return relevance.grade_conversation(answer, threshold)
    if kind == "answer-relevance":
        raise ValueError("answer-relevance is graded with the embedding model (evals/relevance_judge.py)")
    if kind == "g-eval":
        data = _json_object(answer)
        raw = data.get("score")
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 <= raw <= 10:
            raise ValueError(f"the answer's score {raw!r} is not from 0 to 10")
        score = float(raw) / 10
        bound = G_EVAL_THRESHOLD if threshold is None else threshold
        passed = score >= bound - 1e-12
        reason = str(data.get("reason") or "")
        return passed, score, reason if passed else f"score {score:.2f} < {bound:g}: {reason}"
    raise ValueError(f"not a model-graded type: {kind}")

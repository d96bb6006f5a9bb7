"""promptfoo's `answer-relevance` and `conversation-relevance` assertions: the judge prompt each
asks and how its answer is scored (promptfoo's rules).

- `answer-relevance`: the judge writes three questions the output answers (one call; promptfoo
  asks three times); the score is the mean cosine similarity of their embeddings with the
  query's (the `query` variable when it is text, else the rendered prompt), passing at the
  threshold (default 0, as promptfoo's). Without an embedder the check fails, saying why.
- `conversation-relevance`: the conversation is the `_conversation` variable (a list of
  `{input, output}` turns), else the one turn (prompt, output). Windows of 5 turns slide over
  it (one window when the conversation is no longer); the judge says, per window, whether its
  last response is relevant in that context (all windows in one answer; promptfoo asks per
  window). The score is the share of relevant windows, passing at the threshold (default 0.5).

`prompt(kind, task, output, variables)` -> (system, user text); `grade_conversation(answer,
threshold)` -> (pass, score, reason); `questions(answer)` -> the generated questions. Pure: no
I/O (the answer-relevance grading with embeddings: `evals/relevance_judge.py`).
"""

from __future__ import annotations

import json
from typing import Any

KINDS = ("answer-relevance", "conversation-relevance")
QUESTIONS = 3
WINDOW = 5  # promptfoo's default windowSize
ANSWER_THRESHOLD = 0.0
CONVERSATION_THRESHOLD = 0.5
_SYSTEM = "You judge whether answers are relevant. Reply with JSON only."


def query_of(task: str, variables: dict[str, Any]) -> str:
    """The query an answer is compared with: the `query` variable when it is text, else the prompt."""
    query = variables.get("query")
    return query if isinstance(query, str) and query.strip() else task


def turns(task: str, output: str, variables: dict[str, Any]) -> list[tuple[str, str]]:
    """(input, output) of each turn: `_conversation` when it is a non-empty list (or its JSON text), else
    the one turn."""
    conversation = variables.get("_conversation")
    if isinstance(conversation, str) and conversation.lstrip().startswith("["):  # a case's variables are text: JSON
        try:
            conversation = json.loads(conversation)
        except (ValueError, RecursionError):
            conversation = None
    if isinstance(conversation, list) and conversation:
        return [(_text(t.get("input")), _text(t.get("output"))) if isinstance(t, dict) else (_text(t), "")
                for t in conversation]
    return [(task, output)]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def windows(items: list[tuple[str, str]], size: int = WINDOW) -> list[list[tuple[str, str]]]:
    """The sliding windows: the whole conversation when it is no longer than `size`, else each run
    of `size` turns."""
    if len(items) <= size:
        return [items]
    return [items[end - size + 1:end + 1] for end in range(size - 1, len(items))]


def prompt(kind: str, task: str, output: str, variables: dict[str, Any] | None) -> tuple[str, str]:
    """(system, user text) of the judge call."""
    variables = variables or {}
    if kind == "answer-relevance":
        return _SYSTEM, (f"[Answer]: {output.strip() or '(empty)'}\n\nWrite {QUESTIONS} different questions that this "
                         "answer answers, each one a question a user could have asked to get it. Answer with JSON "
                         'only: {"questions": ["...", "...", "..."]}')
    if kind == "conversation-relevance":
        parts = []
        for n, window in enumerate(windows(turns(task, output, variables)), 1):
            shown = "\n".join(f"User: {i}\nAssistant: {o}" for i, o in window)
            parts.append(f"### Window {n}\n{shown}")
        return _SYSTEM, ("\n\n".join(parts) + "\n\nFor each window, decide whether the assistant's LAST response is "
                         "relevant to the user's last message in the context of that window (a vague reply to a "
                         "vague message, such as a greeting, is relevant). Answer with JSON only: "
                         '{"verdicts": [{"window": 1, "verdict": "yes" or "no", "reason": "<one sentence>"}, ...]}')
    raise ValueError(f"not a relevance type: {kind}")


def _json_object(answer: str) -> dict[str, Any]:
    start, end = answer.find("{"), answer.rfind("}")
    try:
        data = json.loads(answer[start:end + 1]) if 0 <= start < end else None
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise ValueError("the answer holds no JSON object")
    return data


def questions(answer: str) -> list[str]:
    """The generated questions of the judge's answer; ValueError when there are none."""
    found = _json_object(answer).get("questions")
    if not isinstance(found, list) or not found or not all(isinstance(q, str) and q.strip() for q in found):
        raise ValueError("the answer's `questions` is not a list of texts")
    return [q.strip() for q in found[:QUESTIONS]]


def grade_conversation(answer: str, threshold: float | None) -> tuple[bool, float, str]:
    """(pass, share of relevant windows, reason) of the judge's verdicts, one per window."""
    verdicts = _json_object(answer).get("verdicts")
    if not isinstance(verdicts, list) or not verdicts or not all(isinstance(v, dict) for v in verdicts):
        raise ValueError("the answer's `verdicts` is not a list of objects")
    count = len(verdicts)
    says = [str(v.get("verdict", "")).strip().lower() for v in verdicts]
    if any(s not in ("yes", "no") for s in says):
        raise ValueError("a verdict is not yes or no")
    score = says.count("yes") / count
    bound = CONVERSATION_THRESHOLD if threshold is None else threshold
    passed = score >= bound - 1e-12
    off = "; ".join(f"window {n}: {v.get('reason') or 'not relevant'}" for n, (v, s) in enumerate(zip(verdicts, says, strict=True), 1)
                    if s == "no")
    return passed, score, "" if passed else f"{says.count('yes')} of {count} windows relevant ({score:.2f}) < {bound:g}: {off}"

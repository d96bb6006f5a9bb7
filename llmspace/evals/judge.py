"""Model judges of `llm-rubric` assertions.

The judge model scores one cell's output on criteria, 1 (poor) to 5 (excellent) each: the
criteria of a thread rubric named by the assertion's value (`core/run_verdicts.find_rubric`),
or the value itself as criteria text (one criterion per line). It is asked to answer
`{"scores": {criterion: n}, "reason": "…"}`; an answer with a single `score`, or a bare
number, is taken as that score for every criterion. An answer that cannot be read is an
error for the cell, neither a pass nor a fail. The assertion passes when the mean score is
at or above its `threshold` (default 3).

promptfoo's model-graded types (`factuality`, `model-graded-closedqa`, `g-eval`, `context-*`: an assertion
whose `grader` is set) ask the prompt of `evals/model_graded.py` and are scored by its rules
(0–1), their score stored under the type's name.

An assertion may name its own judge (`Assertion.judge`, promptfoo's `provider`) and its own
prompt (`Assertion.rubric_prompt`, promptfoo's `rubricPrompt`: `evals/rubric_prompt.py`
renders it); an llm-rubric asked that way is graded by promptfoo's answer, `{"pass", "score",
"reason"}`, and its threshold is on promptfoo's 0–1 scale.

Each judge call is a journal record of its own, keyed by the judged cell, the judge model,
the hash of the judge prompt (so a changed prompt or output is judged again) and the judge
repeat; it stores the prompt, the raw answer, the scores and the reason, and its cost
counts toward the budget. Judge calls go through the same cache and provider limits as
cells: `Judge.run` asks the model through the `Ask` that `evals/cell.py` hands it.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError
from . import model_graded, rubric_prompt
from .assertions import Assertion, Check, JsonTooDeep, parse_json_output
from .case import value_text
from .records import CellRecord, JudgeRecord, Reply

if TYPE_CHECKING:
    from ..core.model import Thread
    from .plan import Cell

# Ask a model (its "provider/model" label) one request (`plan.request_data`'s shape) for the
# given repeat: its reply, None when the run was stopped (`evals/cell.py` calls it, cached and gated).
Ask = Callable[[str, dict[str, Any], int], Reply | None]
PROMPT_VERSION = 1
DEFAULT_THRESHOLD = 3.0
JUDGE_REPEAT = 1
SYSTEM = ("You are a strict, fair grader. You score a model's answer to a task on the given criteria, each from 1 "
          "(poor) to 5 (excellent). Reply with JSON only, exactly in this form: "
          '{"scores": {"<criterion>": <1-5>, ...}, "reason": "<one or two sentences>"}')
_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:/\s*5)?\s*$")


@dataclass(frozen=True)
class Criteria:
    items: tuple[tuple[str, str], ...]  # (name, description)

    @property
    def names(self) -> list[str]:
        return [n for n, _ in self.items]


def criteria_for(value: str, thread: Thread | None) -> Criteria:
    """A thread rubric's criteria when `value` names one, else the text's lines as criteria."""
    if thread is not None and thread.evaluationRubrics:
        from ..core.run_verdicts import find_rubric

        try:
            rubric = find_rubric(thread, value)
        except UserFacingError:
            rubric = None
        if rubric is not None:
            return Criteria(tuple((c.name, c.description or "") for c in rubric.criteria))
    lines = [line.strip(" -*\t") for line in value.splitlines() if line.strip(" -*\t")]
    return Criteria(tuple((line, "") for line in lines))


def judge_prompt(task: str, output: str, expected: str | None, criteria: Criteria) -> str:
    parts = ["## Task given to the model", task.strip() or "(empty)", "## The model's answer", output.strip() or "(empty)"]
    if expected:
        parts += ["## Expected answer (reference)", expected.strip()]
    parts.append("## Criteria")
    parts += [f"- {name}" + (f": {desc}" if desc else "") for name, desc in criteria.items]
    keys = ", ".join(json.dumps(n, ensure_ascii=False) for n in criteria.names)
    parts.append(f"Score every criterion ({keys}) from 1 to 5 and answer with the JSON object only.")
    return "\n\n".join(parts)


def prompt_hash(system: str, prompt: str) -> str:
    return hashlib.sha256(f"v{PROMPT_VERSION}\n{system}\n{prompt}".encode()).hexdigest()[:16]


def parse_answer(text: str, names: list[str]) -> tuple[dict[str, float], str]:
    """(scores per criterion, reason); raises ValueError when the answer cannot be read."""
    m = _NUMBER.match(text)
    if m:
        return _all(float(m.group(1)), names), ""
    try:
        data = parse_json_output(text)
    except JsonTooDeep as exc:
        raise ValueError(f"the answer's JSON is {exc}") from None
    except ValueError:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise ValueError("the answer is neither JSON nor a number") from None
        try:
            data = parse_json_output(text[start:end + 1])
        except JsonTooDeep as exc:
            raise ValueError(f"the answer's JSON is {exc}") from None
        except ValueError:
            raise ValueError("the answer's JSON does not parse") from None
    if isinstance(data, (int, float)) and not isinstance(data, bool):
        return _all(float(data), names), ""
    if not isinstance(data, dict):
        raise ValueError("the answer is not a JSON object")
    reason = str(data.get("reason") or "")
    scores = data.get("scores")
    if isinstance(scores, dict):
        out: dict[str, float] = {}
        folded = {str(k).casefold(): v for k, v in scores.items()}
        for name in names:
            value = scores.get(name, folded.get(name.casefold()))
            out[name] = _score(value, name)
        return out, reason
    if "score" in data:
        return _all(_score(data["score"], "score"), names), reason
    raise ValueError("the answer has no scores")


def _score(value: Any, name: str) -> float:
    if isinstance(value, str) and _NUMBER.match(value):
        value = float(_NUMBER.match(value).group(1))  # type: ignore[union-attr]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"no score for {name!r}")
    if not 1 <= value <= 5:
        raise ValueError(f"the score of {name!r} ({value}) is not from 1 to 5")
    return float(value)


def _all(value: float, names: list[str]) -> dict[str, float]:
    score = _score(value, "score")
    return dict.fromkeys(names, score)


def judge_key(cell_key: str, judge_model: str, phash: str, repeat: int = JUDGE_REPEAT) -> str:
    return f"{cell_key}|judge:{judge_model}|{phash}|{repeat}"


class Judge:
    def __init__(self, model: str, thread: Thread | None) -> None:
        self.model = model
        self.thread = thread

    def model_for(self, assertion: Assertion) -> str:
        """The "provider/model" that grades `assertion`: its own judge, else the evaluation's."""
        return assertion.judge or self.model

    def plan(self, cell: Cell, assertion: Assertion, output: str) -> tuple[str, str, Criteria]:
        if assertion.rubric_prompt is not None:  # promptfoo's rubricPrompt: the messages as JSON
            text = json.dumps(rubric_prompt.render(assertion.rubric_prompt, _prompt_values(cell, assertion, output)),
                              ensure_ascii=False)
            return text, prompt_hash("rubricPrompt", text), Criteria(((assertion.grader or "llm-rubric", ""),))
        if assertion.grader is not None:  # a promptfoo model-graded type: its own prompt and scoring
            system, prompt = model_graded.prompt(assertion.grader, assertion.value, cell.task, output, cell.expected,
                                                 cell.vars)
            return prompt, prompt_hash(system, prompt), Criteria(((assertion.grader, ""),))
        criteria = criteria_for(str(assertion.value), self.thread)
        prompt = judge_prompt(cell.task, output, cell.expected, criteria)
        return prompt, prompt_hash(SYSTEM, prompt), criteria

    def request(self, cell: Cell, assertion: Assertion, output: str) -> tuple[str, str, Criteria, dict[str, Any]]:
        """The judge call for `assertion` on `output`: (prompt as recorded, its hash, criteria, the request
        sent to `model_for(assertion)`)."""
        prompt, phash, criteria = self.plan(cell, assertion, output)
        if assertion.rubric_prompt is not None:
            messages = json.loads(prompt)
            system = "\n\n".join(text for role, text in messages if role == "system")
            data = {"system": system, "messages": [{"role": role, "text": text} for role, text in messages if role != "system"],
                    "tools": [], "params": None}
        else:
            system = SYSTEM if assertion.grader is None else model_graded.prompt(
                assertion.grader, assertion.value, cell.task, output, cell.expected, cell.vars)[0]
            data = {"system": system, "messages": [{"role": "user", "text": prompt}], "tools": [], "params": None}
        return prompt, phash, criteria, data

    def run(self, cell: Cell, index: int, assertion: Assertion, record: CellRecord, judged: set[str],
            ask: Ask) -> JudgeRecord | None:
        prompt, phash, criteria, data = self.request(cell, assertion, record.reply.output)
        model = self.model_for(assertion)
        key = judge_key(cell.key, model, phash)
        if key in judged:
            return None
        reply = ask(model, data, JUDGE_REPEAT)
        if reply is None:
            return None
        threshold = assertion.threshold if assertion.threshold is not None else DEFAULT_THRESHOLD
        rec = JudgeRecord(key, cell.key, index, model, phash, JUDGE_REPEAT, prompt, reply.output, reply.usage,
                          reply.cost, reply.cached, reply.latency_ms, int(time.time() * 1000))
        if reply.error:
            return replace(rec, error=f"judge call failed: {reply.error}")
        if assertion.grader is not None or assertion.rubric_prompt is not None:
            name = assertion.grader or "llm-rubric"
            try:
                passed, score, why = model_graded.grade(assertion.grader, rec.raw, assertion.threshold) \
                    if assertion.grader is not None else rubric_prompt.grade_rubric(rec.raw, assertion.threshold)
            except ValueError as exc:
                return replace(rec, error=f"the judge's answer could not be read ({exc})")
            return replace(rec, scores={name: score}, reason=why,
                           check=Check(assertion.label, passed, assertion.weight, why, round(score, 4)))
        try:
            scores, reason = parse_answer(rec.raw, criteria.names)
        except ValueError as exc:
            return replace(rec, error=f"the judge's answer could not be read ({exc})")
        mean = sum(scores.values()) / len(scores) if scores else 0.0
        check = Check(assertion.label, mean >= threshold - 1e-9, assertion.weight,
                      reason if mean >= threshold - 1e-9 else f"score {mean:.2f} < {threshold:g}: {reason}", round(mean, 4))
        return replace(rec, scores=scores, reason=reason, check=check)


def _prompt_values(cell: Cell, assertion: Assertion, output: str) -> dict[str, Any]:
    """What a rubricPrompt's placeholders take: the case's variables, then promptfoo's names."""
    value = "" if assertion.value is None else value_text(assertion.value)
    reference = value or (cell.expected or "")
    return {**cell.vars, "output": output, "rubric": value, "completion": output, "criteria": value, "ideal": reference,
            **({"input": cell.task} if assertion.grader is not None else {})}

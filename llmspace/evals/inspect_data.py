"""Inspect AI datasets (CSV and JSON Lines samples) read as cases.

    if is_inspect_row(first_row): case = inspect_case(path, row, n, scorer="includes")

A sample's `input` is a text or a list of chat messages; a text is the variable `input` (and
is sent as a user message after the thread's when the thread does not use `{{input}}`), a
list is sent as messages (system messages join the system prompt). `target` (a text or a
list) is checked by the scorer chosen with `eval new --scorer`, as Inspect's scorers do:
`includes` (a target appears in the answer, any case), `match` (the answer ends with a
target, any case, trailing white space and punctuation aside) or `model` (the judge grades the
answer against the target). With `choices` the prompt lists them lettered (A, B, …) and asks
for `ANSWER: <letter>`; the letter of the target is checked. `id` is the case's id,
`metadata` its metadata, `files` (inside the dataset's folder) variables of their text.
In a CSV cell, a list or object is written as JSON.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from .assertions import Assertion, parse_assertion
from .case import Case, confined, content_id, read_text, value_text
from .promptfoo_keys import INSPECT_FIELDS, REFUSE

SCORERS = ("includes", "match", "model")
ROLES = ("system", "user", "assistant")
LETTERS = string.ascii_uppercase
MODEL_RUBRIC = "The answer is correct: it gives the expected answer (the reference), in substance if not in words."
_PUNCT = re.escape(string.punctuation)


def is_inspect_row(row: Any) -> bool:
    return isinstance(row, dict) and "input" in row and ("target" in row or "choices" in row) and \
        not {"expected", "assert", "vars"} & set(row)


def _json_cell(value: Any) -> Any:
    """A CSV cell holding a JSON list or object, parsed; anything else as it is."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _targets(value: Any, where: str) -> list[str]:
    value = _json_cell(value)
    if value is None or value == "":
        return []
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(t, (str, int, float)) and not isinstance(t, bool) for t in items):
        raise UserFacingError(f"{where}: `target` must be a text or a list of texts.")
    return [str(t) for t in items]


def _messages(value: list[Any], where: str) -> list[dict[str, str]]:
    out = []
    for n, m in enumerate(value, 1):
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            raise UserFacingError(f"{where}: input message {n} needs a role of {', '.join(ROLES)} "
                                  f"(tool messages are not sent), not {m!r:.80}.")
        content = m.get("content", "")
        if isinstance(content, list):
            parts = []
            for part in content:
                if not (isinstance(part, dict) and part.get("type") == "text"):
                    raise UserFacingError(f"{where}: input message {n} has a {part.get('type') if isinstance(part, dict) else part!r} "
                                          "part; only text parts are sent.")
                parts.append(str(part.get("text", "")))
            content = "".join(parts)
        out.append({"role": str(m["role"]), "text": value_text(content)})
    return out


def _choice_prompt(question: str, choices: list[str]) -> str:
    letters = ", ".join(LETTERS[: len(choices)])
    listed = "\n".join(f"{LETTERS[i]}) {c}" for i, c in enumerate(choices))
    return (f"Answer the multiple choice question below. Reply in the form 'ANSWER: $LETTER' (without quotes), "
            f"where LETTER is one of {letters}.\n\n{question}\n\n{listed}")


def _choice_letters(targets: list[str], choices: list[str], where: str) -> list[str]:
    letters = []
    for t in targets:
        if len(t.strip()) == 1 and t.strip().upper() in LETTERS[: len(choices)]:
            letters.append(t.strip().upper())
        elif t in choices:
            letters.append(LETTERS[choices.index(t)])
        else:
            raise UserFacingError(f"{where}: the target {t!r} is neither a choice letter nor one of the choices.")
    return letters


def scorer_assertion(scorer: str, targets: list[str], where: str) -> Assertion:
    """The assertion that checks `targets` the way Inspect's scorer of that name does."""
    alternatives = "|".join(re.escape(t.strip()) for t in targets)
    if scorer == "includes":
        raw: dict[str, Any] = ({"type": "icontains", "value": targets[0]} if len(targets) == 1
                               else {"type": "regex", "value": f"(?i)(?:{alternatives})"})
    elif scorer == "match":
        raw = {"type": "regex", "value": f"(?i)(?:{alternatives})[\\s{_PUNCT}]*$"}
    elif scorer == "model":
        raw = {"type": "llm-rubric", "value": MODEL_RUBRIC}
    else:
        raise UserFacingError(f"The scorer must be one of {', '.join(SCORERS)}, not {scorer!r}.")
    return parse_assertion(raw, where)


def inspect_case(path: Path, row: dict[str, Any], n: int, scorer: str, note: Callable[[str], None] | None = None) -> Case:
    """One sample as a case; `note` hears what runs differently from Inspect."""
    where = f"{path.name} row {n}"
    for key in row:
        entry = INSPECT_FIELDS.get(str(key))
        if entry is not None and entry[0] == REFUSE and row[key] not in (None, "", {}, []):
            raise UserFacingError(f"{path.name}: row {n} uses `{key}` ({entry[1]}); nothing was run.")
    values: dict[str, Any] = {str(k): v for k, v in row.items() if k not in INSPECT_FIELDS}
    metadata = _json_cell(row.get("metadata"))
    if isinstance(metadata, dict):
        values.update({str(k): v for k, v in metadata.items() if str(k) not in values})
    files = _json_cell(row.get("files")) or {}
    if not isinstance(files, dict):
        raise UserFacingError(f"{where}: `files` must map names to files in the dataset's folder.")
    if files and note is not None:
        note(f"`files` of {path.name}: {INSPECT_FIELDS['files'][1]} (there is no sandbox)")
    for name, ref in files.items():
        values[str(name)] = read_text(confined(path.parent, str(ref).removeprefix("file://"), where), where, str(ref))
    targets = _targets(row.get("target"), where)
    choices = _json_cell(row.get("choices"))
    raw_input = _json_cell(row.get("input"))
    messages: list[dict[str, str]]
    if isinstance(raw_input, list):
        messages = _messages(raw_input, where)
    elif isinstance(raw_input, str):
        messages = [{"role": "user", "text": raw_input}]
    else:
        raise UserFacingError(f"{where}: `input` must be a text or a list of chat messages.")
    assertions: list[Assertion] = []
    if choices not in (None, "", []):
        if not isinstance(choices, list) or not all(isinstance(c, (str, int, float)) for c in choices) or len(choices) > 26:
            raise UserFacingError(f"{where}: `choices` must be a list of up to 26 texts.")
        choices = [str(c) for c in choices]
        users = [m for m in messages if m["role"] == "user"]
        if not users:
            raise UserFacingError(f"{where}: a multiple-choice sample needs a user message to list the choices in.")
        users[-1]["text"] = _choice_prompt(users[-1]["text"], choices)
        letters = _choice_letters(targets, choices, where)
        if letters:
            assertions.append(parse_assertion({"type": "regex", "value": "(?i)ANSWER\\s*:\\s*\\**\\(?(?:" + "|".join(letters) + ")\\b"},
                                              where))
            targets = letters
    elif targets:
        assertions.append(scorer_assertion(scorer, targets, where))
    if isinstance(raw_input, str):
        values["input"] = messages[-1]["text"]
    rid = row.get("id")
    case_id = str(rid).strip() if rid not in (None, "") else content_id(row)
    return Case(case_id, values, " | ".join(targets) if targets else None, assertions, None, "", n, lenient=True,
                messages=messages, messages_unless="input" if isinstance(raw_input, str) else None)

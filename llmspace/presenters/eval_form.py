"""Evaluations › New Evaluation… without Tk: the dataset preview, the variable mapping and
the form's validation.

    preview = dataset_preview(Path("cases.csv"), thread, limit=5)
    preview.columns, preview.rows         # the first rows, one text per column
    preview.mapping                       # (variable, source, ok): where each of the thread's variables comes from
    form = NewEvalForm(thread_rel, dataset, models="p/m, p/m", assertions="contains\\nregex: ^\\\\d+$", judge="")
    form.problems(preview)                # what to fix before running (empty: ready)
    form.spec_data(thread_file, out_dir)  # the evaluation file's content (`evals/spec.write_spec`)
    form.new_eval(thread_file, out)       # whole conversations: the request `eval new --conversation` writes
    form_from_spec(spec, thread_rel)      # an evaluation file's form, to run it again (the dialog prefilled)

`fresh` (the dialog's "Fresh answers") calls the models even when the response cache holds
an answer, as `eval run --no-cache` does; it is a choice of one run, not part of the file.

Assertions are typed one per line: `TYPE` (checks against the case's `expected`) or
`TYPE: VALUE` (`regex: ^\\d+$`, `llm-rubric: Is the answer correct?`); `not-TYPE` negates.
A variable of the thread is filled by the dataset column of its name, else keeps the
thread's own value; a variable with neither is a problem (every cell would fail to render).

"Whole conversations" (`conversation`): each row is a scenario a simulated user plays
(`mode: conversation`); the preview lists the first scenarios' persona and goal, a row that is
not a scenario is the preview's problem (naming its line), and the file is written by
`evals/new_file.py::write_new_eval`, as `eval new --conversation` writes it (the user model
defaults to the first model; no assertion typed: the default set). A scenarios file chosen
without it is a problem saying to choose it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent.matrix_spec import parse_model
from ..core.templating.references import references
from ..core.templating.variables import custom_values, typed_variables
from ..errors import UserFacingError
from ..evals.assertions import JUDGED, parse_assertion
from ..evals.conversation_setup import DEFAULT_MAX_USER_TURNS
from ..evals.dataset import RESERVED, load_dataset, unsupported_message
from ..evals.new_file import ConversationChoice, NewEval
from ..evals.scenarios import looks_like_scenarios, read_scenarios

if TYPE_CHECKING:
    from ..core.model import Thread
    from ..evals.spec import EvalSpec

PREVIEW_ROWS = 5


@dataclass(frozen=True)
class Preview:
    cases: int
    columns: list[str]
    rows: list[list[str]]
    mapping: list[tuple[str, str, bool]]  # variable, where its value comes from, ok
    problem: str | None = None  # the dataset could not be read (the message says why)
    has_expected: bool = False


def _cell_text(value: Any, width: int = 80) -> str:
    text = value if isinstance(value, str) else ("" if value is None else json.dumps(value, ensure_ascii=False))
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def thread_variables(thread: Thread) -> list[str]:
    """The variables a thread's text uses (sorted); defined but unused ones need no value."""
    return sorted({r.name for r in references(thread)})


SCENARIOS_CHOICE = "This dataset holds conversation scenarios (rows with user: or opening:): choose Whole conversations."


def dataset_preview(path: Path, thread: Thread | None, limit: int = PREVIEW_ROWS, conversation: bool = False) -> Preview:
    try:
        dataset = load_dataset(path)
        scenarios = read_scenarios(path, DEFAULT_MAX_USER_TURNS) if conversation else None
    except UserFacingError as exc:
        return Preview(0, [], [], [], exc.message)
    columns: dict[str, None] = {"id": None}
    for case in dataset.cases[:limit]:
        for key in case.values:
            columns.setdefault(key, None)
    has_expected = any(c.expected is not None for c in dataset.cases)
    if has_expected:
        columns["expected"] = None
    names = list(columns)
    rows = []
    for case in dataset.cases[:limit]:
        values = {"id": case.id, "expected": case.expected, **case.values}
        rows.append([_cell_text(values.get(n)) for n in names])
    mapping: list[tuple[str, str, bool]] = []
    if thread is not None:
        present = {k for c in dataset.cases for k in c.values}
        own = set(custom_values(thread)) | set(typed_variables(thread))
        for name in thread_variables(thread):
            if name in present and name not in RESERVED:
                missing = sum(1 for c in dataset.cases if name not in c.values)
                mapping.append((name, f"column {name!r}" + (f" (missing in {missing} rows)" if missing else ""), not missing or name in own))
            elif name in own:
                mapping.append((name, "the thread's value", True))
            else:
                mapping.append((name, "no column of this name and no value in the thread", False))
    problem = unsupported_message(dataset)
    if scenarios is not None:
        names = ["id", "persona", "goal"]
        rows = [[_cell_text(case_id), _cell_text(s.persona), _cell_text(s.goal)] for case_id, s in scenarios[:limit]]
    elif problem is None and thread is not None and looks_like_scenarios(path, set(thread_variables(thread))):
        problem = SCENARIOS_CHOICE
    return Preview(len(dataset.cases), names, rows, mapping, problem, has_expected)


def parse_assertion_lines(text: str) -> list[dict[str, Any]]:
    """`TYPE` or `TYPE: VALUE` per line (blank lines and `#` comments skipped); checked."""
    out: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        kind, sep, value = line.partition(":")
        raw: dict[str, Any] = {"type": kind.strip()}
        if sep and value.strip():
            raw["value"] = value.strip()
        parse_assertion(raw, f"assertion line {n}")
        out.append(raw)
    return out


def parse_model_list(text: str) -> list[str]:
    models = [f"{p}/{m}" for p, m in (parse_model(part) for part in text.replace("\n", ",").split(",") if part.strip())]
    if len(set(models)) != len(models):
        raise UserFacingError("A model is listed twice.")
    return models


@dataclass
class NewEvalForm:
    thread_rel: str
    dataset: str
    models: str
    assertions: str = "contains"
    judge: str = ""
    repeat: int = 1
    fresh: bool = False  # call the models even for cached answers (not written to the file)
    conversation: bool = False  # whole conversations: each row a scenario a simulated user plays
    user_model: str = ""  # with `conversation`: the simulated user ("": the first model)

    def problems(self, preview: Preview | None) -> list[str]:
        """Everything to fix before the evaluation can run, in form order."""
        out: list[str] = []
        if not self.thread_rel:
            out.append("Choose the thread to evaluate.")
        if not self.dataset.strip():
            out.append("Choose a dataset (CSV, JSON Lines, JSON or YAML).")
        elif preview is not None and preview.problem:
            out.append(preview.problem)
        elif preview is not None and preview.cases == 0:
            out.append("The dataset has no cases.")
        if preview is not None:
            out += [f"The variable {name!r} has no value: add a column {name!r} to the dataset or give it a value in the thread."
                    for name, _source, ok in preview.mapping if not ok]
        try:
            if not parse_model_list(self.models):
                out.append("Choose at least one model (PROVIDER/MODEL).")
        except UserFacingError as exc:
            out.append(exc.message)
        asserts: list[dict[str, Any]] = []
        try:
            asserts = parse_assertion_lines(self.assertions)
        except UserFacingError as exc:
            out.append(exc.message)
        if self.judge.strip():
            try:
                parse_model(self.judge)
            except UserFacingError as exc:
                out.append(f"Judge: {exc.message}")
        elif any(a["type"].removeprefix("not-") == JUDGED for a in asserts):
            out.append("An llm-rubric assertion needs a judge model.")
        if not 1 <= self.repeat <= 100:
            out.append("Repeats must be from 1 to 100.")
        if self.conversation and self.user_model.strip():
            try:
                parse_model(self.user_model)
            except UserFacingError as exc:
                out.append(f"User model: {exc.message}")
        return out

    def new_eval(self, thread_file: Path, out: Path) -> NewEval:
        """The evaluation file to write for whole conversations (`evals/new_file.write_new_eval`)."""
        return NewEval(thread_file, Path(self.dataset).expanduser(), out, parse_model_list(self.models), repeat=self.repeat,
                       judge="/".join(parse_model(self.judge)) if self.judge.strip() else None,
                       assertions=parse_assertion_lines(self.assertions) or None,
                       conversation=ConversationChoice(self.user_model.strip() or None))

    def spec_data(self, thread_file: Path, out_dir: Path) -> dict[str, Any]:
        """The evaluation file's content, its paths relative to `out_dir` (where it is written)."""
        data: dict[str, Any] = {"thread": _relative(thread_file, out_dir),
                                "dataset": _relative(Path(self.dataset).expanduser().absolute(), out_dir),
                                "models": parse_model_list(self.models), "repeat": self.repeat,
                                "assert": parse_assertion_lines(self.assertions)}
        if self.judge.strip():
            data["judge"] = "/".join(parse_model(self.judge))
        data.update({"threshold": 1.0, "concurrency": 4})
        return data


def _assertion_line(data: dict[str, Any]) -> str:
    value = data.get("value")
    if value is None:
        return str(data["type"])
    return f"{data['type']}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"


def form_from_spec(spec: EvalSpec, thread_rel: str) -> NewEvalForm:
    """The form of an evaluation file (`thread_rel`: its thread in the workspace), to run it
    again; the dataset as an absolute path (the dialog previews it)."""
    dataset = Path(spec.dataset).expanduser()
    return NewEvalForm(thread_rel, str(dataset if dataset.is_absolute() else (spec.folder / dataset).absolute()),
                       ", ".join(f"{p}/{m}" for p, m in spec.models),
                       "\n".join(_assertion_line(a.to_data()) for a in spec.assertions),
                       "/".join(spec.judge) if spec.judge else "", spec.repeat,
                       conversation=spec.conversation is not None,
                       user_model="/".join(spec.conversation.user_model) if spec.conversation and spec.conversation.user_model else "")


def _relative(path: Path, base: Path) -> str:
    try:
        return Path(os.path.relpath(path, base)).as_posix()
    except ValueError:  # another drive (Windows)
        return str(path)

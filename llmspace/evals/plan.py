"""Planning an evaluation: cases × variants rendered on the driver, then × models × repeats.

    plan = build_plan(spec, dataset, thread, skills)      # -> Plan; raises before anything runs

Each case × variant is rendered once (`core/templating/render.py`, the case's values and then the
variant's as `--var` overrides) into a request without credentials (`execute.request_data`);
every model and repeat shares it. A variable the thread uses that a row leaves without a
value is reported for all rows at once, before anything runs. A cell's `key`
(`case|provider/model|variant|#repeat`) identifies it in the journal, the cache and the
results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..agent.convert import neutral_messages, tool_specs
from ..core.eval_assertions import JUDGED, Assertion
from ..core.templating.references import references
from ..core.templating.render import render_thread
from ..core.templating.resolution import RenderEnv
from ..core.templating.variables import all_names
from ..errors import UserFacingError
from .execute import request_data

if TYPE_CHECKING:
    from ..core.model import Thread
    from .dataset import Dataset
    from .spec import EvalSpec


@dataclass(frozen=True)
class Cell:
    key: str
    case_id: str
    model: str  # provider/model
    variant: str
    repeat: int  # 1-based
    request: dict[str, Any]
    assertions: tuple[Assertion, ...]
    threshold: float | None = None
    expected: str | None = None
    vars: dict[str, str] = field(default_factory=dict)
    task: str = ""  # the rendered last user text (what a judge is shown as the task)


@dataclass
class Plan:
    cells: list[Cell]
    case_ids: list[str]
    models: list[str]
    variants: list[str]
    repeat: int
    has_judge: bool


def cell_key(case_id: str, model: str, variant: str, repeat: int) -> str:
    return f"{case_id}|{model}|{variant}|#{repeat}"


def _last_user_text(request: dict[str, Any]) -> str:
    for m in reversed(request["messages"]):
        if m["role"] == "user":
            return str(m.get("text", ""))
    return ""


def build_plan(spec: EvalSpec, dataset: Dataset, thread: Thread, skills: Any = None) -> Plan:
    names = all_names(thread) | {r.name for r in references(thread)}
    params = thread.model.params if thread.model is not None else None
    tools = tool_specs(thread.context.tools if thread.context else None)
    missing: list[str] = []
    rendered: dict[tuple[str, str], tuple[dict[str, Any], dict[str, str]]] = {}
    for case in dataset.cases:
        for variant, values in spec.variants.items():
            overrides = {**case.variables_for(names), **values}
            try:
                out = render_thread(thread, RenderEnv(skills=skills, overrides=overrides))
            except UserFacingError as exc:
                missing.append(f"case {case.id} (row {case.row}): {exc.message}")
                continue
            unresolved = [p.message for p in out.problems if p.kind == "unresolved"]
            if unresolved:
                missing.append(f"case {case.id} (row {case.row}): " + " ".join(unresolved))
                continue
            request = request_data(out.system_prompt, neutral_messages(thread, out), tools, params)
            rendered[(case.id, variant)] = (request, {**{k: str(v) for k, v in case.values.items()}, **values})
    if missing:
        shown = "\n  ".join(missing[:20]) + (f"\n  … and {len(missing) - 20} more" if len(missing) > 20 else "")
        raise UserFacingError(f"Variables without a value in {dataset.path.name}:\n  {shown}",
                              hint="Add a column named after each variable, or give the variable a value in the thread.")
    models = [f"{p}/{m}" for p, m in spec.models]
    cells: list[Cell] = []
    has_judge = False
    for case in dataset.cases:
        assertions = tuple(spec.assertions) + tuple(case.assertions)
        has_judge = has_judge or any(a.type == JUDGED for a in assertions)
        for variant in spec.variants:
            request, values = rendered[(case.id, variant)]
            task = _last_user_text(request)
            for model in models:
                for r in range(1, spec.repeat + 1):
                    cells.append(Cell(cell_key(case.id, model, variant, r), case.id, model, variant, r, request, assertions,
                                      case.threshold, case.expected, values, task))
    if has_judge and spec.judge is None:
        raise UserFacingError("An llm-rubric assertion needs a judge model.", hint="Add `judge: PROVIDER/MODEL` to the file or pass --judge.")
    return Plan(cells, [c.id for c in dataset.cases], models, list(spec.variants), spec.repeat, has_judge)

"""Planning an evaluation: cases × variants rendered on the driver, then × models × repeats.

    plan = build_plan(spec, scan, thread, skills)         # -> Plan; raises before anything runs
    for cell in plan.iter_cells(wanted): …                 # streamed from the dataset

Each case × variant is rendered once to check it (kept for up to `KEEP_RENDERED` of them;
beyond that nothing is kept), and again when a cell of it runs (`core/templating/render.py`, the case's values and then the
variant's as `--var` overrides) into a request without credentials (`request_data`);
every model and repeat shares it. A variable the thread uses that a row leaves without a
value is reported for all rows at once, before anything runs, and so is a case without an
`expected` whose assertion compares the output with it (`contains` without a value). A cell's `key`
(`case|provider/model|variant|#repeat`) identifies it in the journal, the cache and the
results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..agent.convert import neutral_messages, tool_specs
from ..agent.matrix_spec import parse_model
from ..core.templating.references import references
from ..core.templating.render import render_thread
from ..core.templating.resolution import RenderEnv
from ..core.templating.variables import PLACEHOLDER_RE, all_names
from ..errors import UserFacingError
from ..providers.base import NeutralMessage
from .assertions import COMPARE, JUDGED, SIMILAR, Assertion, needs_expected
from .case import value_text

if TYPE_CHECKING:
    from ..core.model import ModelParams, Thread
    from ..providers.base import ToolSpec
    from .dataset import Case, DatasetScan
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


class Plan:
    """The cells of an evaluation, in order (case, variant, model, repeat).

    A plan made from a dataset (`build_plan`) streams: `iter_cells(wanted)` reads the dataset
    again and renders a case × variant only when one of its cells is wanted, so a run holds
    the cells it runs, not one per row. `cells` and `case_ids` hold everything (the app's
    grid, which shows every cell); `Plan(cells, case_ids, …)` is a plan given its cells."""

    def __init__(self, cells: list[Cell] | None, case_ids: list[str] | None, models: list[str], variants: list[str],
                 repeat: int, has_judge: bool, *, case_count: int | None = None,
                 stream: Callable[[Callable[[str], bool] | None, bool], Iterator[Cell]] | None = None,
                 stream_ids: Callable[[], Iterator[str]] | None = None, notes: list[str] | None = None) -> None:
        self._cells = cells
        self.notes = notes or []  # what ran differently (variables a promptfoo or Inspect case left undefined)
        self._case_ids = case_ids
        self.models = models
        self.variants = variants
        self.repeat = repeat
        self.has_judge = has_judge
        self.judges: list[tuple[str, str]] = []  # the assertions' own judges (promptfoo's `provider`), besides spec.judge
        self.embedders: list[tuple[str, str]] = []  # similar assertions' own embedders (promptfoo's `provider`), besides spec.embedder
        self.compare: list[str] = []  # the types over a case's outputs it uses (select-best, max-score: evals/compare_outputs.py)
        self.case_count = case_count if case_count is not None else len(case_ids or [])
        self._stream = stream
        self._stream_ids = stream_ids

    def usable_judges(self, registry: Any, judge: tuple[str, str] | None) -> list[tuple[str, str]]:
        """The assertions' own judges (`judges`) that `registry` can call; the others are dropped
        with a note (the evaluation's judge grades their assertions), or refused naming them when
        the evaluation has no judge."""
        usable = []
        for provider, model in self.judges:
            try:
                registry.resolve(None, provider, model)
            except UserFacingError:
                if judge is None:
                    raise UserFacingError(f"An assertion's judge `provider` names {provider}/{model}, which is not a "
                                          "configured model, and the evaluation has no judge; nothing was run.",
                                          hint="Configure that provider, or add `judge: PROVIDER/MODEL` (or --judge).") from None
                self.notes.append(f"a judge `provider` names {provider}/{model}, which is not a configured model: the "
                                  f"evaluation's judge ({'/'.join(judge)}) grades its assertions")
                continue
            usable.append((provider, model))
        self.judges = usable
        return usable

    @property
    def cell_count(self) -> int:
        return self.case_count * len(self.models) * len(self.variants) * self.repeat

    def iter_cells(self, wanted: Callable[[str], bool] | None = None, *, render: bool = True) -> Iterator[Cell]:
        """The cells whose key `wanted` accepts (all by default), in plan order; with
        `render=False` a streamed cell has no request (for results, which need none)."""
        if self._stream is not None:
            return self._stream(wanted, render)
        return (c for c in self._cells or [] if wanted is None or wanted(c.key))

    @property
    def cells(self) -> list[Cell]:
        if self._cells is None:
            self._cells = list(self.iter_cells())
        return self._cells

    @property
    def case_ids(self) -> list[str]:
        if self._case_ids is None:
            self._case_ids = list(self._stream_ids()) if self._stream_ids is not None else []
        return self._case_ids


_JUDGING = (JUDGED, "select-best")  # the types a judge model grades
EMPTY = "\ue000"  # stands for an empty value while a lenient case renders; removed from the request after
KEEP_RENDERED = 5_000  # case × variants whose requests the plan keeps from its check (a few MB at most)


def cell_key(case_id: str, model: str, variant: str, repeat: int) -> str:
    return f"{case_id}|{model}|{variant}|#{repeat}"


def request_data(system: str, messages: tuple[NeutralMessage, ...], tools: tuple[ToolSpec, ...],
                 params: ModelParams | None) -> dict[str, Any]:
    """A rendered request as plain data (what a cell carries, journals and hashes; evals/cell.py's
    `model_request` turns it back into a request for the adapter)."""
    msgs = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "text": m.text}
        if m.images:
            item["images"] = [list(i) for i in m.images]
        if m.thinking:
            item["thinking"] = m.thinking
        if m.tool_calls:
            item["toolCalls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments, "result": c.result_text,
                                  "isError": c.result_is_error} for c in m.tool_calls]
        msgs.append(item)
    return {"system": system, "messages": msgs, "tools": [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools],
            "params": params.model_dump(exclude_none=True, by_alias=True) if params is not None else None}


def _last_user_text(request: dict[str, Any]) -> str:
    for m in reversed(request["messages"]):
        if m["role"] == "user":
            return str(m.get("text", ""))
    return ""


def build_plan(spec: EvalSpec, dataset: DatasetScan, thread: Thread, skills: Any = None) -> Plan:
    """Check every case × variant renders (one pass over the dataset, nothing kept but the
    problems), then a plan that streams its cells."""
    names = all_names(thread) | {r.name for r in references(thread)}
    params = thread.model.params if thread.model is not None else None
    tools = tool_specs(thread.context.tools if thread.context else None)
    models = [f"{p}/{m}" for p, m in spec.models]

    def render(case: Case, variant: str, values: dict[str, str]) -> tuple[dict[str, Any] | None, str | None]:
        overrides = {**case.variables_for(names), **values}
        if case.lenient:  # promptfoo and Inspect: an empty value is sent as "" (the renderer refuses empty ones)
            overrides = {k: v if v.strip() else EMPTY for k, v in overrides.items()}
        try:
            out = render_thread(thread, RenderEnv(skills=skills, overrides=overrides))
            unresolved = [p.message for p in out.problems if p.kind == "unresolved"]
            if unresolved and case.lenient:  # … and a variable the case leaves undefined is ""
                blank = {m.group(1).strip() for text in unresolved for m in PLACEHOLDER_RE.finditer(text)}
                out = render_thread(thread, RenderEnv(skills=skills, overrides={**dict.fromkeys(blank, EMPTY), **overrides}))
                unresolved = [p.message for p in out.problems if p.kind == "unresolved"]
                undefined.update(blank)
        except UserFacingError as exc:
            return None, f"case {case.id} (row {case.row}): {exc.message}"
        if unresolved:
            return None, f"case {case.id} (row {case.row}): " + " ".join(unresolved)
        return case_request(case, out.system_prompt, neutral_messages(thread, out), names), None

    undefined: set[str] = set()  # variables lenient cases left undefined (rendered as "")
    tools_params = (tools, params)

    def case_request(case: Case, system: str, messages: tuple[NeutralMessage, ...], used: set[str]) -> dict[str, Any]:
        """The request of a case: the thread's, then the case's own messages (Inspect `input`), unless
        the thread carries them itself through the variable `messages_unless` names."""
        data = request_data(system, messages, *tools_params)
        if case.lenient:
            data["system"] = data["system"].replace(EMPTY, "")
            for m in data["messages"]:
                m["text"] = m["text"].replace(EMPTY, "")
                for c in m.get("toolCalls", []):
                    c["result"] = c["result"].replace(EMPTY, "")
        if case.messages and not (case.messages_unless and case.messages_unless in used):
            extra_system = [m["text"] for m in case.messages if m["role"] == "system"]
            if extra_system:
                data["system"] = "\n\n".join([data["system"], *extra_system]) if data["system"] else "\n\n".join(extra_system)
            data["messages"] += [{"role": m["role"], "text": m["text"]} for m in case.messages if m["role"] != "system"]
        return data

    if dataset.kind == "inspect":
        dataset = replace(dataset, scorer=spec.scorer or "includes")  # the scorer decides the check of `target`
    missing: list[str] = []
    missing_count = 0
    has_judge = False
    own_judges: set[str] = set()  # assertions' own judges; `needs_judge`: one judged assertion has none
    needs_judge = False
    has_similar = False  # a similar (without its own embedder) or answer-relevance assertion: the evaluation's embedder
    own_embedders: set[str] = set()
    compare: set[str] = set()
    kept: dict[tuple[str, str], dict[str, Any]] | None = {}  # the checked requests of a small plan, not rendered again
    no_expected: list[str] = []  # cases whose assertions compare with an `expected` they lack
    no_expected_count = 0
    for case in dataset.cases():
        has_judge = has_judge or any(a.type in _JUDGING for a in (*spec.assertions, *case.assertions))
        own_judges.update(a.judge for a in case.assertions if a.type in _JUDGING and a.judge)
        needs_judge = needs_judge or any(a.type in _JUDGING and not a.judge for a in (*spec.assertions, *case.assertions))
        compare.update(a.type for a in (*spec.assertions, *case.assertions) if a.type in COMPARE)
        has_similar = has_similar or any((a.type == SIMILAR and not a.embedder) or a.grader == "answer-relevance"
                                         for a in (*spec.assertions, *case.assertions))
        own_embedders.update(a.embedder for a in case.assertions if a.type == SIMILAR and a.embedder)
        if case.expected is None:
            wanting = [a.label for a in (*spec.assertions, *case.assertions) if needs_expected(a)]
            if wanting:
                no_expected_count += 1
                if len(no_expected) < 20:
                    no_expected.append(f"case {case.id} (row {case.row}): " + ", ".join(wanting))
        for variant, values in spec.variants.items():
            request, problem = render(case, variant, values)
            if problem is not None:
                missing_count += 1
                if len(missing) < 20:
                    missing.append(problem)
            elif kept is not None and request is not None:
                kept[(case.id, variant)] = request
                if len(kept) > KEEP_RENDERED:
                    kept = None
    if missing:
        shown = "\n  ".join(missing) + (f"\n  … and {missing_count - 20} more" if missing_count > 20 else "")
        raise UserFacingError(f"Variables without a value in {dataset.path.name}:\n  {shown}",
                              hint="Add a column named after each variable, or give the variable a value in the thread.")
    if no_expected:
        shown = "\n  ".join(no_expected) + (f"\n  … and {no_expected_count - 20} more" if no_expected_count > 20 else "")
        raise UserFacingError(f"{no_expected_count} {'cases have' if no_expected_count != 1 else 'case has'} no `expected` for an "
                              f"assertion that compares the output with it:\n  {shown}",
                              hint="Add an `expected` column (or key) to the dataset, or give those assertions a value.")
    if needs_judge and spec.judge is None:
        raise UserFacingError("An llm-rubric or select-best assertion needs a judge model.",
                              hint="Add `judge: PROVIDER/MODEL` to the file or pass --judge.")
    _check_compare(spec, sorted(compare), models)
    if has_similar and spec.embedder is None:
        raise UserFacingError("A similar or answer-relevance assertion needs an embedding model.",
                              hint="Add `embedder: PROVIDER/MODEL` to the file or pass --embedder (any OpenAI-compatible "
                                   "/v1/embeddings provider).")

    def stream(wanted: Callable[[str], bool] | None, rendered: bool) -> Iterator[Cell]:
        usable = {"/".join(j) for j in plan.judges}  # the assertions' own judges that are configured
        for case in dataset.cases():
            assertions = tuple(spec.assertions) + tuple(replace(a, judge=None) if a.judge and a.judge not in usable else a
                                                        for a in case.assertions)  # an unconfigured judge: the evaluation's
            for variant, values in spec.variants.items():
                keys = [(model, r, cell_key(case.id, model, variant, r)) for model in models for r in range(1, spec.repeat + 1)]
                keys = [k for k in keys if wanted is None or wanted(k[2])]
                if not keys:
                    continue
                request = kept.get((case.id, variant)) if kept is not None else None
                problem = None
                if request is None:
                    request, problem = render(case, variant, values) if rendered else ({}, None)
                if request is None:  # the dataset changed since the plan was checked
                    raise UserFacingError(f"{dataset.path.name} changed during the run: {problem}", hint="Run it again.")
                task = _last_user_text(request) if rendered else ""
                all_values = {**{k: value_text(v) for k, v in case.values.items()}, **values}  # lists and objects as JSON
                for model, r, key in keys:
                    yield Cell(key, case.id, model, variant, r, request, assertions, case.threshold, case.expected, all_values, task)

    notes = [f"the variable {n!r} has no value in some cases: the empty string was used (as promptfoo and Inspect do)"
             for n in sorted(undefined)]
    plan = Plan(None, None, models, list(spec.variants), spec.repeat, has_judge, case_count=dataset.count, stream=stream,
                notes=notes,
                stream_ids=lambda: (c.id for c in dataset.cases()))
    plan.judges = [parse_model(j) for j in sorted(own_judges)]  # `Plan.usable_judges` keeps the configured ones
    plan.embedders = [parse_model(e) for e in sorted(own_embedders)]  # `embeddings.evaluation_embedder` resolves them
    plan.compare = sorted(compare)
    return plan


def _check_compare(spec: EvalSpec, kinds: list[str], models: list[str]) -> None:
    """select-best and max-score need two outputs of a case or more (promptfoo refuses fewer), and one-turn cells."""
    if not kinds:
        return
    if len(models) * len(spec.variants) < 2:
        raise UserFacingError(f"{' and '.join(kinds)} compare{'s' if len(kinds) == 1 else ''} the outputs of one case across "
                              f"models and variants, and this evaluation gives one output per case ({models[0]}); nothing was run.",
                              hint="Give two models or more (`models:` or --models), or two variants, or remove those assertions.")
    if spec.conversation is not None:
        raise UserFacingError(f"{' and '.join(kinds)} are not run in conversation mode; nothing was run.",
                              hint="Remove those assertions, or run the cases as one-turn cells.")

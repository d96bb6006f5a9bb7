"""Writing a new evaluation file for a thread and a dataset, checked before it is written: the
dataset read (every row), test cases or — with `conversation` — scenarios played by a simulated
user (`mode: conversation`), with a default assertion set and notes on the defaults chosen.

    written = write_new_eval(NewEval(thread_file, Path("cases.csv"), out, models=["openai/gpt-4.1"]),
                             thread, workspace_root)
    written.path, written.cases, written.notes      # notes: one sentence each, for stderr or the dialog

A conversation file's user model defaults to the first model; a thread's function tools are
answered by the tool simulator, which defaults to the user model; with a judge the default
assertion is `goal-met` (docs/conversations.md), without one none (the scenarios' own `assert`
lists still run). A scenarios file given without `conversation` is refused with the fix. A
promptfoo configuration of `promptfoo:simulated-user` tests is a conversation file too: it needs
`--user-model` (refused without one) and keeps its own assertions only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent.matrix_spec import parse_model
from ..core.templating.references import references
from ..errors import UserFacingError
from .conversation_setup import DEFAULT_MAX_USER_TURNS, MODE, max_user_turns
from .dataset import INSPECT, PROMPTFOO, DatasetScan, dataset_kind, inside_folder, notes_message, scan_dataset, unsupported_message
from .scenarios import looks_like_scenarios, read_scenarios
from .spec import is_eval_file, load_spec, write_spec

if TYPE_CHECKING:
    from ..core.model import Thread


@dataclass(frozen=True)
class ConversationChoice:
    """`mode: conversation` settings of a new file ("P/M" texts; None: the default)."""

    user_model: str | None = None
    tool_simulator: str | None = None
    max_user_turns: int | None = None
    asked: bool = True  # --conversation given (False: only its flags, for promptfoo's simulated-user tests)


@dataclass(frozen=True)
class NewEval:
    thread_file: Path
    dataset: Path
    out: Path
    models: list[str] | Callable[[], list[str]]  # "P/M" each, or asked for once the dataset is checked
    variants: dict[str, dict[str, str]] | None = None
    repeat: int = 1
    judge: str | None = None
    embedder: str | None = None
    skip_unsupported: bool = False
    scorer: str | None = None
    assertions: list[dict[str, Any]] | None = None  # None: the default set
    conversation: ConversationChoice | None = None


@dataclass
class Written:
    path: Path
    cases: int
    models: list[str]
    notes: list[str] = field(default_factory=list)


def write_new_eval(req: NewEval, thread: Thread, workspace_root: Path) -> Written:
    """Check the dataset, then write the evaluation file `req.out` (never over an existing one)."""
    out = req.out
    if not is_eval_file(out.name):
        raise UserFacingError(f"{out.name} must end in .eval.yaml or .eval.json.")
    if out.exists():
        raise UserFacingError(f"{out} already exists.", hint="Edit it, or pass -o FILE to write another one.")
    dataset_file = req.dataset.expanduser().absolute()
    out_dir = out.absolute().parent
    if not (inside_folder(dataset_file, out_dir) or inside_folder(dataset_file, workspace_root)):
        raise UserFacingError(f"The dataset {dataset_file} is outside the workspace and the evaluation file's folder, "
                              "where an evaluation file may name it.",
                              hint="Move or copy it into the workspace, or name it for one run with "
                                   "`llmspace eval run FILE --dataset PATH`.")
    conv = req.conversation
    turns = max_user_turns(conv.max_user_turns, "--max-user-turns") if conv and conv.max_user_turns is not None else None
    if conv is not None and conv.asked and dataset_kind(dataset_file) != PROMPTFOO:
        read_scenarios(dataset_file, turns or DEFAULT_MAX_USER_TURNS)  # a row that is not a scenario: its line named
    dataset = scan_dataset(dataset_file, req.scorer or "includes")  # streamed: every row checked, none kept
    conv = _simulated_user_choice(dataset, conv, turns)
    problem = unsupported_message(dataset)
    if problem and not req.skip_unsupported:
        raise UserFacingError(problem, hint="Remove those assertions, or replace them with ones llmspace runs "
                                            "(docs/promptfoo-compat.md); no evaluation file was written.")
    if conv is None and looks_like_scenarios(dataset_file, {r.name for r in references(thread)}):
        raise UserFacingError(f"{dataset_file.name} holds conversation scenarios (rows with `user:` or `opening:`), "
                              "not test cases.", hint="Add --conversation to play each row with a simulated user "
                                                      "(docs/conversations.md); no evaluation file was written.")
    notes = [n for n in [notes_message(dataset)] if n is not None]
    models = list(req.models() if callable(req.models) else req.models)
    data: dict[str, Any] = {"thread": _relative(req.thread_file, out_dir), "dataset": _relative(dataset_file, out_dir)}
    if conv is not None:
        data["mode"] = MODE
    data["models"] = models
    if conv is not None:
        data.update(_conversation(conv, models, thread, req.judge, notes))
        if turns is not None:
            data["maxUserTurns"] = turns
    if req.variants:
        data["variants"] = req.variants
    data["repeat"] = req.repeat
    data["assert"] = req.assertions if req.assertions is not None else _default_asserts(req, dataset, notes)
    if dataset.kind == INSPECT and conv is None:
        data["scorer"] = req.scorer or "includes"
    if req.judge:
        data["judge"] = req.judge
    if req.embedder:
        data["embedder"] = req.embedder
    if req.skip_unsupported:
        data["skipUnsupported"] = True
    data.update({"threshold": 1.0, "concurrency": 4})
    write_spec(out, data)
    load_spec(out).validate()
    return Written(out, dataset.count, models, notes)


def _simulated_user_choice(dataset: DatasetScan, conv: ConversationChoice | None, turns: int | None) -> ConversationChoice | None:
    """The conversation settings of a new file: promptfoo's simulated-user tests need a user model
    (promptfoo's own is its hosted service); other datasets take the flags only with --conversation."""
    if dataset.conversation:
        if conv is None or not conv.user_model:
            raise UserFacingError(f"{dataset.path.name} holds promptfoo:simulated-user tests, which run as conversations, "
                                  "and needs a model to play the user (promptfoo's simulated user is its own hosted "
                                  "service, which llmspace does not call).",
                                  hint="Pass --user-model PROVIDER/MODEL; no evaluation file was written.")
        return conv
    if conv is not None and not conv.asked:
        raise UserFacingError("--user-model, --tool-simulator and --max-user-turns apply to conversations only.",
                              hint="Add --conversation.")
    if conv is not None and dataset.kind == PROMPTFOO:
        read_scenarios(dataset.path, turns or DEFAULT_MAX_USER_TURNS)  # refused: promptfoo tests, not scenarios
    return conv


def _conversation(conv: ConversationChoice, models: list[str], thread: Thread, judge: str | None,
                  notes: list[str]) -> dict[str, Any]:
    user = "/".join(parse_model(conv.user_model)) if conv.user_model else models[0]
    if not conv.user_model:
        notes.append(f"Note: the simulated user is {user} (the first model); pass --user-model P/M to choose another.")
    data: dict[str, Any] = {"userModel": user}
    tools = list(thread.context.tools or []) if thread.context is not None else []
    functions = [t.name for t in tools if t.type == "function"]
    if conv.tool_simulator:
        data["toolSimulator"] = "/".join(parse_model(conv.tool_simulator))
    elif functions:
        data["toolSimulator"] = user
        notes.append(f"Note: the thread's function tools ({', '.join(functions)}) are answered by {user}; pass "
                     "--tool-simulator P/M for another model, or give fixed results under `simulatedTools:`.")
    return data


def _default_asserts(req: NewEval, dataset: Any, notes: list[str]) -> list[dict[str, Any]]:
    if req.conversation is None or dataset.conversation:  # promptfoo's tests: their own checks only
        return [{"type": "contains"}] if dataset.has_expected and dataset.kind != INSPECT and not dataset.conversation else []
    if req.judge:
        return [{"type": "goal-met"}]
    notes.append("Note: no judge, so no default assertion: each scenario's own `assert` list is checked. Pass "
                 "--judge P/M to check that every user's goal was met (goal-met).")
    return []


def _relative(path: Path, base: Path) -> str:
    try:
        return Path(os.path.relpath(path, base)).as_posix()
    except ValueError:  # another drive (Windows)
        return str(path)

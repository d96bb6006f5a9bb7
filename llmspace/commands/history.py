"""CLI commands for run history and evaluation (see llmspace/cli.py for the contract):

    llmspace history THREAD [--inspect RUN | --restore RUN | --remove RUN | --remove-evaluation ID] [--json]
    llmspace compare THREAD RUN_A RUN_B [--all]
    llmspace evaluate THREAD RUN_A RUN_B --verdict V [--note TEXT] [--rubric R --scores A:… B:…]
    llmspace rubric add|edit|delete|list THREAD …
    llmspace fork THREAD RUN MESSAGE_ID

RUN is a run id, a unique prefix of one, or `#N` (N-th newest as listed by `history`).
Every change is saved through `app.workspace.save`; reading normalises history and
evaluations the way loading does in the app.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError, ValidationFailed
from .parsers import help_handler

if TYPE_CHECKING:
    from ..app import App
    from ..core.model import Evaluation, Rubric, RubricSnapshot, Thread

SCORES_HELP = """\
Scores (with --rubric): one argument per run, SIDE:CRITERION=SCORE[,CRITERION=SCORE…].
SIDE is A (RUN_A), B (RUN_B) or the run id. CRITERION is the criterion's name
(case-insensitive), its id, or its 1-based position in the rubric. SCORE is a whole
number from 1 (poor) to 5 (excellent). Every criterion needs a score for both runs.
Example: --scores A:accuracy=4,clarity=5 B:accuracy=3,clarity=4   (or A:1=4,2=5 B:1=3,2=4)
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `history`, `compare`, `evaluate`, `rubric` and `fork`."""
    h = sub.add_parser("history", help="list, inspect, restore or remove the recorded runs of a thread",
                       description="List the run history of a thread (newest first) with its evaluations and rubrics.")
    h.add_argument("thread", metavar="THREAD", help="workspace path of the thread")
    act = h.add_mutually_exclusive_group()
    act.add_argument("--inspect", metavar="RUN", help="show a run's messages (read-only)")
    act.add_argument("--restore", metavar="RUN", help="replace the thread's title/model/context with the run's snapshot")
    act.add_argument("--remove", metavar="RUN", help="remove a run (and the evaluations that refer to it)")
    act.add_argument("--remove-evaluation", metavar="ID", help="remove one evaluation")
    h.add_argument("--json", action="store_true", help="print JSON instead of text")
    h.set_defaults(handler=history_command)

    c = sub.add_parser("compare", help="show the structural diff of two runs",
                       description="Compare two runs message by message: text, tool calls, arguments, results, usage, latency, cost. "
                                   "(To score a thread over a dataset of test cases, use `llmspace eval`.)")
    c.add_argument("thread", metavar="THREAD")
    c.add_argument("run_a", metavar="RUN_A")
    c.add_argument("run_b", metavar="RUN_B")
    c.add_argument("--all", action="store_true", help="also list identical messages")
    c.set_defaults(handler=compare_command)

    e = sub.add_parser("evaluate", help="record a verdict (and optional rubric scores) for two runs",
                       description="Save the evaluation of a pair of runs (one per unordered pair; a reversed pair updates it): "
                                   "a verdict by hand on two runs of one thread. (`llmspace eval` runs a thread over a dataset "
                                   "of test cases with assertions and model judges.)",
                       epilog=SCORES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("thread", metavar="THREAD")
    e.add_argument("run_a", metavar="RUN_A")
    e.add_argument("run_b", metavar="RUN_B")
    e.add_argument("--verdict", required=True, choices=["leftBetter", "rightBetter", "tie", "pass", "fail", "A", "B"],
                   help="leftBetter (or A), rightBetter (or B), tie, pass or fail")
    e.add_argument("--note", help="an optional note (trimmed; empty removes it)")
    e.add_argument("--rubric", metavar="R", help="rubric id or name to score with")
    e.add_argument("--scores", nargs="+", metavar="SIDE:C=S,…", help="scores per run (see below)")
    e.set_defaults(handler=evaluate_command)

    r = sub.add_parser("rubric", help="manage the evaluation rubrics of a thread",
                       description="Rubrics have 2–6 ordered criteria (name ≤ 80 characters, optional description ≤ 240).")
    rsub = r.add_subparsers(dest="rubric_command", metavar="ACTION")
    r.set_defaults(handler=help_handler(r))
    crit_help = 'a criterion as "NAME" or "NAME: DESCRIPTION" (repeat 2–6 times, in order)'
    ra = rsub.add_parser("add", help="create a rubric")
    ra.add_argument("thread", metavar="THREAD")
    ra.add_argument("name", metavar="NAME")
    ra.add_argument("--criterion", "-c", action="append", default=[], required=True, help=crit_help)
    ra.set_defaults(handler=rubric_add)
    re_ = rsub.add_parser("edit", help="rename a rubric or replace its criteria (bumps the revision when changed)")
    re_.add_argument("thread", metavar="THREAD")
    re_.add_argument("rubric", metavar="RUBRIC", help="rubric id or name")
    re_.add_argument("--name", help="new name")
    re_.add_argument("--criterion", "-c", action="append", default=None, help=crit_help + "; criteria keep their ids by name")
    re_.set_defaults(handler=rubric_edit)
    rd = rsub.add_parser("delete", help="delete a rubric (saved evaluations keep their snapshot)")
    rd.add_argument("thread", metavar="THREAD")
    rd.add_argument("rubric", metavar="RUBRIC")
    rd.set_defaults(handler=rubric_delete)
    rl = rsub.add_parser("list", help="list the rubrics")
    rl.add_argument("thread", metavar="THREAD")
    rl.set_defaults(handler=rubric_list)

    f = sub.add_parser("fork", help="start a new thread from a message of a recorded run",
                       description="Write a new thread beside THREAD with the run's messages up to and including MESSAGE_ID.")
    f.add_argument("thread", metavar="THREAD")
    f.add_argument("run", metavar="RUN")
    f.add_argument("message_id", metavar="MESSAGE_ID")
    f.set_defaults(handler=fork_command)


# -- helpers ------------------------------------------------------------------------------------


def load(app: App, arg: str) -> tuple[str, Thread]:
    """(workspace path, thread) with run history and evaluations normalised as on load."""
    from ..core.history import normalize_history
    from ..core.run_verdicts import normalize_evaluations
    from .run import thread_path

    rel = thread_path(app, arg)
    try:
        thread = app.workspace.open(rel)
    except ValidationFailed as exc:
        thread = _lenient_open(app, rel, exc)
    normalize_history(thread)
    normalize_evaluations(thread)
    return rel, thread


def _lenient_open(app: App, rel: str, exc: ValidationFailed) -> Thread:
    """Open a thread whose run history or evaluations hold malformed records (dropped, with a warning)."""
    import sys

    try:
        thread = app.workspace.open_repaired(rel)
    except ValidationFailed:
        raise exc from None
    print(f"warning: {rel}: malformed run-history or evaluation records were left out ({exc.problems[0][0]}: "
          f"{exc.problems[0][1]}); saving will write the thread without them.", file=sys.stderr)
    return thread


def resolve_run(thread: Thread, given: str) -> str:
    """A run id from an id, a unique id prefix, or `#N` (N-th newest)."""
    from ..core.history import find_run

    runs = thread.runHistory or []
    ids = [r.id for r in runs if r.id]
    if given in ids:
        return given
    if given.startswith("#") and given[1:].isdigit():
        n = int(given[1:])
        if 1 <= n <= len(ids):
            return ids[-n]
        raise UserFacingError(f"No run {given}: this thread has {len(ids)} run(s).", hint="List them with `llmspace history THREAD`.")
    matches = [i for i in ids if i.startswith(given)] if given else []
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise UserFacingError(f"{given!r} matches {len(matches)} runs ({', '.join(matches[:4])}).", hint="Type more of the id.")
    find_run(thread, given)  # raises the clear "no run" error
    return given


def _verdict(v: str) -> str:
    return {"A": "leftBetter", "B": "rightBetter"}.get(v, v)


def parse_criteria(items: list[str]) -> list[dict[str, str]]:
    out = []
    for item in items:
        name, sep, desc = item.partition(":")
        entry = {"name": name.strip()}
        if sep and desc.strip():
            entry["description"] = desc.strip()
        out.append(entry)
    return out


def _criterion_id(rubric: RubricSnapshot, key: str) -> str:
    key = key.strip()
    for c in rubric.criteria:
        if c.id == key or c.name.casefold() == key.casefold():
            return c.id
    if key.isdigit() and 1 <= int(key) <= len(rubric.criteria):
        return rubric.criteria[int(key) - 1].id
    names = ", ".join(f"{i + 1}={c.name}" for i, c in enumerate(rubric.criteria))
    raise UserFacingError(f"Rubric {rubric.name!r} has no criterion {key!r} (criteria: {names}).")


def parse_scores(items: list[str], rubric: RubricSnapshot, left: str, right: str) -> dict[str, dict[str, int]]:
    """Turn `A:c1=4,c2=5 B:…` into {run id: {criterion id: score}} (see SCORES_HELP)."""
    out: dict[str, dict[str, int]] = {}
    for item in items:
        side, sep, rest = item.partition(":")
        if not sep:
            raise UserFacingError(f"Scores {item!r} need a side: A:CRITERION=SCORE,… or B:….", hint="See `llmspace evaluate --help`.")
        side = side.strip()
        run_id = {"A": left, "a": left, "B": right, "b": right}.get(side, side)
        if run_id not in (left, right):
            raise UserFacingError(f"Scores for {side!r}: use A, B, {left} or {right}.")
        row = out.setdefault(run_id, {})
        for pair in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = pair.rpartition("=")
            if not eq or not value.strip().lstrip("-").isdigit():
                raise UserFacingError(f"Score {pair!r} must look like CRITERION=SCORE with a whole number 1–5.")
            row[_criterion_id(rubric, key)] = int(value)
    return out


def _eval_line(ev: Evaluation) -> str:
    from ..core.run_verdicts import averages

    line = f"  {ev.id}  A={ev.leftRunId}  B={ev.rightRunId}  {ev.verdict}"
    if ev.rubric is not None:
        avg = averages(ev)
        line += f"  [{ev.rubric.name} r{ev.rubric.revision}"
        if avg is not None:
            line += f": A {avg.left:.2f}, B {avg.right:.2f}, B−A {avg.delta:+.2f}"
        line += "]"
    if ev.note:
        line += f"  — {ev.note}"
    return line


def _rubric_lines(r: Rubric) -> list[str]:
    lines = [f"  {r.name}  (id {r.id}, revision {r.revision})"]
    for i, c in enumerate(r.criteria, 1):
        lines.append(f"    {i}. {c.name}" + (f" — {c.description}" if c.description else "") + f"  [{c.id}]")
    return lines


# -- handlers --------------------------------------------------------------------------------------


def history_command(args: argparse.Namespace, app: App) -> int:
    from ..core import history as h
    from ..core.run_verdicts import remove_evaluation

    rel, thread = load(app, args.thread)
    if args.restore:
        run_id = resolve_run(thread, args.restore)
        h.restore_run(thread, run_id)
        app.workspace.save(rel, thread)
        print(f"Restored run {run_id} into {rel}.")
        return 0
    if args.remove:
        run_id = resolve_run(thread, args.remove)
        dropped = h.remove_run(thread, run_id)
        app.workspace.save(rel, thread)
        print(f"Removed run {run_id}" + (f" and {dropped} evaluation(s) that referred to it." if dropped else "."))
        return 0
    if args.remove_evaluation:
        remove_evaluation(thread, args.remove_evaluation)
        app.workspace.save(rel, thread)
        print(f"Removed evaluation {args.remove_evaluation}.")
        return 0
    if args.inspect:
        view = h.inspect_run(thread, resolve_run(thread, args.inspect))
        if args.json:
            run = h.find_run(thread, view.id)
            print(json.dumps(run.model_dump(exclude_unset=True, by_alias=True), ensure_ascii=False, indent=2))
            return 0
        print(f"Run {view.id}  {h.absolute_time(view.timestamp)} ({h.relative_time(view.timestamp)})  {view.model}  {view.messages_label}")
        if view.usage_label:
            print(f"Usage: {view.usage_label}")
        if view.system_prompt:
            print(f"System prompt: {view.system_prompt}")
        for m in view.messages:
            print(f"\n[{m.role} {m.id}]")
            thinking = getattr(m, "thinking", None)  # assistant messages only
            if thinking:
                print(f"(thinking) {thinking}")
            text = m.text()
            if text:
                print(text)
            for call in getattr(m, "toolCalls", None) or []:
                print(f"→ {call.input.name}({json.dumps(call.input.arguments, ensure_ascii=False)})  [{call.id}]")
                if call.output is not None:
                    print(("✗ " if call.output.isError else "← ") + call.output.text())
        return 0
    rows = h.list_runs(thread)
    if args.json:
        print(json.dumps({
            "runs": [{"id": v.id, "timestamp": v.timestamp, "model": v.model, "messages": v.message_count,
                      "usage": v.usage.model_dump() if v.usage else None, "summary": v.summary} for v in rows],
            "evaluations": [e.model_dump(exclude_unset=True) for e in thread.evaluations or []],
            "rubrics": [r.model_dump(exclude_unset=True) for r in thread.evaluationRubrics or []],
        }, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        print(f"{rel} has no recorded runs yet (run it with `llmspace run {rel}`).")
    else:
        print(f"Runs of {rel} (newest first):")
        for n, v in enumerate(rows, 1):
            usage = f"  {v.usage_label}" if v.usage_label else ""
            print(f"  #{n:<2} {v.id}  {h.absolute_time(v.timestamp)} ({h.relative_time(v.timestamp)})  {v.model}  {v.messages_label}{usage}")
            print(f"       {v.summary}")
    if thread.evaluations:
        print("Evaluations:")
        for ev in thread.evaluations:
            print(_eval_line(ev))
    if thread.evaluationRubrics:
        print("Rubrics:")
        for r in thread.evaluationRubrics:
            print(_rubric_lines(r)[0])
    return 0


def compare_command(args: argparse.Namespace, app: App) -> int:
    from ..core.compare import compare_runs, render_text

    _, thread = load(app, args.thread)
    a, b = resolve_run(thread, args.run_a), resolve_run(thread, args.run_b)
    print(render_text(compare_runs(thread, a, b), show_same=args.all))
    from ..core.run_verdicts import averages, displayed_verdict, find_pair

    ev = find_pair(thread, a, b)
    if ev is not None:
        line = f"\nEvaluation {ev.id}: {displayed_verdict(ev, a)}"
        avg = averages(ev)
        if avg is not None and ev.rubric is not None:
            left, right = (avg.left, avg.right) if ev.leftRunId == a else (avg.right, avg.left)
            line += f"; {ev.rubric.name}: A {left:.2f}, B {right:.2f}, B − A {right - left:+.2f}"
        if ev.note:
            line += f" — {ev.note}"
        print(line)
    return 0


def evaluate_command(args: argparse.Namespace, app: App) -> int:
    from ..core.run_verdicts import averages, find_pair, find_rubric, save_evaluation

    rel, thread = load(app, args.thread)
    a, b = resolve_run(thread, args.run_a), resolve_run(thread, args.run_b)
    scores = None
    rubric_id = None
    if args.rubric:
        try:
            rubric: Any = find_rubric(thread, args.rubric)
        except UserFacingError:
            existing = find_pair(thread, a, b)
            if existing is None or existing.rubric is None or args.rubric not in (existing.rubric.id, existing.rubric.name):
                raise
            rubric = existing.rubric
        rubric_id = rubric.id
        if not args.scores:
            raise UserFacingError("--rubric needs --scores for both runs.", hint="See `llmspace evaluate --help`.")
        scores = parse_scores(args.scores, rubric, a, b)
    elif args.scores:
        raise UserFacingError("--scores needs --rubric.", hint="Pass the rubric's name or id with --rubric.")
    ev = save_evaluation(thread, a, b, _verdict(args.verdict), note=args.note, rubric_id=rubric_id, scores=scores)
    app.workspace.save(rel, thread)
    print(f"Saved evaluation {ev.id}: A={ev.leftRunId} B={ev.rightRunId} verdict {ev.verdict}")
    avg = averages(ev)
    if avg is not None and ev.rubric is not None:
        print(f"Rubric {ev.rubric.name} (revision {ev.rubric.revision}): average A {avg.left:.2f}, B {avg.right:.2f}, B − A {avg.delta:+.2f}")
    return 0


def rubric_add(args: argparse.Namespace, app: App) -> int:
    from ..core.run_verdicts import create_rubric

    rel, thread = load(app, args.thread)
    r = create_rubric(thread, args.name, parse_criteria(args.criterion))
    app.workspace.save(rel, thread)
    print(f"Created rubric {r.name!r} (id {r.id}, revision {r.revision}).")
    return 0


def rubric_edit(args: argparse.Namespace, app: App) -> int:
    from ..core.run_verdicts import find_rubric, update_rubric

    rel, thread = load(app, args.thread)
    before = find_rubric(thread, args.rubric).revision
    criteria = parse_criteria(args.criterion) if args.criterion else None
    r = update_rubric(thread, args.rubric, name=args.name, criteria=criteria)
    if r.revision == before:
        print(f"Rubric {r.name!r} unchanged (revision {r.revision}).")
        return 0
    app.workspace.save(rel, thread)
    print(f"Updated rubric {r.name!r} to revision {r.revision}.")
    return 0


def rubric_delete(args: argparse.Namespace, app: App) -> int:
    from ..core.run_verdicts import delete_rubric

    rel, thread = load(app, args.thread)
    r = delete_rubric(thread, args.rubric)
    app.workspace.save(rel, thread)
    print(f"Deleted rubric {r.name!r}; saved evaluations keep their snapshot of it.")
    return 0


def rubric_list(args: argparse.Namespace, app: App) -> int:
    _, thread = load(app, args.thread)
    if not thread.evaluationRubrics:
        print("No rubrics yet (create one with `llmspace rubric add THREAD NAME -c NAME -c NAME`).")
        return 0
    for r in thread.evaluationRubrics:
        print("\n".join(_rubric_lines(r)))
    return 0


def fork_command(args: argparse.Namespace, app: App) -> int:
    rel, thread = load(app, args.thread)
    new_rel = app.workspace.fork_run(rel, resolve_run(thread, args.run), args.message_id)
    print(f"Forked into {new_rel}.")
    return 0

"""CLI command group `llmspace eval`: evaluations of a thread over a dataset of test cases.

    llmspace eval new THREAD --dataset FILE [--models P/M,…] [--variants …] [--repeat N] [--judge P/M]
                      [--scorer includes|match|model] [-o FILE]
                      [--conversation [--user-model P/M] [--tool-simulator P/M] [--max-user-turns N]]
    llmspace eval run FILE [--dataset FILE] [--models …] [--variants …] [--repeat N] [--judge P/M]
                      [--budget USD] [--concurrency N] [--react] [--max-turns N] [--no-cache] [--fresh] [--out DIR]
                      [--executor local|ray] [--ray-address auto|HOST:PORT|ray://HOST:PORT]
                      [--embedder P/M] [--skip-unsupported]
    llmspace eval list
    llmspace eval compare RESULT_A RESULT_B [--format text|markdown|html] [-o FILE]
    llmspace eval report RESULT
    llmspace eval cache clear

`eval run` exits 0 when every model/variant reaches the file's threshold, 1 when one does
not, 2 on any error (a bad file or dataset, a failed cell, a run the budget stopped), 130
when interrupted (what finished is kept; the next run resumes). `eval compare` exits 0 when
no case flipped from pass to fail, 1 when one did. Errors of this group are
printed here and exit 2 (the CLI's generic mapping would give 1). Progress goes to stderr.
The engine is `llmspace/evals/`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError
from ..redact import redact_known
from .parsers import help_handler

if TYPE_CHECKING:
    from ..app import App
    from ..evals.run import Progress

RUN_EPILOG = """\
The evaluation file (<stem>.eval.yaml beside its thread, made by `eval new`) names the
thread, the dataset, models, variants, repeats, default assertions, judge, threshold,
budget and concurrency; the flags above override it for one run.

Results: $LLM_SPACE_HOME/evals/<name>/<YYYYMMDD-HHMMSS>/ (or --out DIR) with journal.jsonl,
summary.json, junit.xml, results.csv, results.jsonl and report.html (open it in a browser;
`eval compare A B` compares two results folders). A run resumes the newest unfinished
results folder whose evaluation file, dataset and thread are unchanged (journaled cells are
never requested again); --fresh starts over. Answers are cached under
$LLM_SPACE_HOME/cache/eval/ per repeat (--no-cache to call the models anyway).

Executor: cells run on a pool of threads here (local, the default) or as tasks on a Ray cluster
(--executor ray; pip install 'llmspace[ray]'; docs/scale-out.md). Both from the flag, else the
file's `executor`/`rayAddress`, else $LLM_SPACE_HOME/settings/evals.json, else RAY_ADDRESS.

Exit code: 0 every threshold holds, 1 one does not, 2 an error (or cells left unrun), 130 interrupted.
"""


COMPARE_EPILOG = """\
RESULT_A and RESULT_B are results folders: a path, or NAME/STAMP under $LLM_SPACE_HOME/evals
(`llmspace eval list`). A case passes or fails over its repeats as in the summary (passK); its
score is the mean weighted assertion score of its repeats. Cases paired on one side only, or
with an error or not run on a side, are listed apart and left out of the tests. "Likely real"
means p < 0.05.

Exit code: 0 nothing got worse, 1 a case flipped from pass to fail, 2 an error.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    e = sub.add_parser("eval", help="evaluate a thread over a dataset of test cases (assertions, judges, JUnit)",
                       description="Evaluations over datasets: run a thread for every test case of a dataset on several "
                                   "models and repeats, check assertions and model judges, and report pass rates. "
                                   "(`evaluate` and `compare` record a verdict on, or diff, two runs of one thread.)")
    esub = e.add_subparsers(dest="eval_command", metavar="ACTION")
    e.set_defaults(handler=help_handler(e))

    n = esub.add_parser("new", help="write an evaluation file beside a thread",
                        description="Write <stem>.eval.yaml beside THREAD for the dataset FILE (checked now).")
    n.add_argument("thread", metavar="THREAD", help="workspace path of the thread")
    n.add_argument("--dataset", required=True, metavar="FILE", help="CSV, JSON Lines, JSON or YAML cases (or a promptfoo test file)")
    n.add_argument("--models", metavar="P/M,P/M", help="models to run (default: the thread's model)")
    n.add_argument("--variants", action="append", default=[], metavar="FILE|NAME=V;NAME=V", help="variable variants, as matrix runs")
    n.add_argument("--repeat", type=int, default=1, metavar="N", help="runs per case and model (default 1)")
    n.add_argument("--judge", metavar="P/M", help="the model that scores llm-rubric assertions")
    n.add_argument("--embedder", metavar="P/M", help="the embedding model of similar assertions (OpenAI-compatible /v1/embeddings, or local/NAME on the built-in engine)")
    n.add_argument("--skip-unsupported", action="store_true",
                   help="write the file even when the dataset uses assertion types llmspace does not run; runs leave "
                        "them out, each named in the summary and the report")
    n.add_argument("--scorer", choices=["includes", "match", "model"],
                   help="Inspect datasets: how `target` is checked, as Inspect's scorers do (default includes)")
    n.add_argument("-o", "--output", metavar="FILE", help="where to write it (default: <stem>.eval.yaml beside the thread)")
    n.add_argument("--conversation", action="store_true",
                   help="each row is a scenario a simulated user plays with the thread's agent (mode: conversation; "
                        "docs/conversations.md)")
    n.add_argument("--user-model", metavar="P/M", help="with --conversation: the model that plays the user (default: the first model); "
                                                         "required for promptfoo:simulated-user tests, which are conversations")
    n.add_argument("--tool-simulator", metavar="P/M",
                   help="with --conversation: the model that answers the thread's function tools (default: the user model)")
    n.add_argument("--max-user-turns", type=int, metavar="N", help="with --conversation: user messages per conversation (default 10)")
    n.set_defaults(handler=eval_new)

    r = esub.add_parser("run", help="run an evaluation file", epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
                        description="Run every case × model × variant × repeat of FILE, check the assertions, write the results.")
    r.add_argument("file", metavar="FILE", help="the evaluation file (.eval.yaml or .eval.json)")
    r.add_argument("--dataset", metavar="FILE", help="another dataset for this run")
    r.add_argument("--models", metavar="P/M,P/M", help="models for this run")
    r.add_argument("--variants", action="append", default=None, metavar="FILE|NAME=V;NAME=V", help="variants for this run (repeatable)")
    r.add_argument("--repeat", type=int, metavar="N", help="runs per case, model and variant")
    r.add_argument("--judge", metavar="P/M", help="the judge model of llm-rubric assertions")
    r.add_argument("--embedder", metavar="P/M", help="the embedding model of similar assertions (OpenAI-compatible /v1/embeddings, or local/NAME on the built-in engine)")
    r.add_argument("--skip-unsupported", action="store_true", default=None,
                   help="run without the assertion types llmspace does not run, each named in the summary and the report")
    r.add_argument("--budget", type=float, metavar="USD", help="stop launching cells before this cost would be exceeded")
    r.add_argument("--concurrency", type=int, metavar="N", help="cells at once (default: the file's, else 4)")
    r.add_argument("--react", action="store_true", default=None, help="run the thread's tool loop in each cell")
    r.add_argument("--max-turns", type=int, metavar="N", help="tool-loop turn limit per cell (with --react)")
    r.add_argument("--no-cache", action="store_true", help="call the models even when an answer is cached")
    r.add_argument("--fresh", action="store_true", help="start a new results folder instead of resuming")
    r.add_argument("--out", metavar="DIR", help="write the results to DIR")
    r.add_argument("--executor", choices=["local", "ray"], help="where cells run: threads here (default) or a Ray cluster")
    r.add_argument("--ray-address", metavar="ADDRESS", help="the Ray cluster: auto, HOST:PORT or ray://HOST:PORT "
                                                             "(default: the file's rayAddress, the setting, RAY_ADDRESS, else auto)")
    r.add_argument("--user-model", metavar="P/M", help="mode: conversation: the model that plays the user")
    r.add_argument("--replay", metavar="RESULT", help="mode: conversation: feed RESULT's recorded user turns and tool results "
                                                       "back and run only the agent")
    r.add_argument("--agent-too", action="store_true", help="with --replay: replay the agent too (no call but the judges)")
    r.set_defaults(handler=eval_run)

    ls = esub.add_parser("list", help="list evaluation results", description="List the results folders under $LLM_SPACE_HOME/evals.")
    ls.set_defaults(handler=eval_list)

    cmp = esub.add_parser("compare", help="compare two results folders case by case (flips, McNemar, paired bootstrap)",
                          epilog=COMPARE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
                          description="Pair the cases of two results folders by case id and model/variant: the cases that "
                                      "flipped (pass → fail first, then fail → pass), the score changes, an exact McNemar "
                                      "test of pass/fail and a paired bootstrap of the scores.")
    cmp.add_argument("result_a", metavar="RESULT_A", help="the results folder to compare against (the baseline)")
    cmp.add_argument("result_b", metavar="RESULT_B", help="the results folder to compare (the change)")
    cmp.add_argument("--format", choices=["text", "markdown", "html"], default="text",
                     help="text for the terminal (default), markdown or html for a pull request")
    cmp.add_argument("-o", "--output", metavar="FILE", help="write the comparison to FILE instead of printing it")
    cmp.set_defaults(handler=eval_compare)

    rep = esub.add_parser("report", help="write report.html of a results folder again",
                          description="Write report.html of a results folder from its summary.json and results.jsonl "
                                      "(every `eval run` writes it; this rebuilds it, say for an older folder).")
    rep.add_argument("folder", metavar="RESULT", help="the results folder")
    rep.set_defaults(handler=eval_report)

    c = esub.add_parser("cache", help="manage the response cache of evaluations")
    csub = c.add_subparsers(dest="cache_command", metavar="ACTION")
    c.set_defaults(handler=help_handler(c))
    cc = csub.add_parser("clear", help="empty $LLM_SPACE_HOME/cache/eval")
    cc.set_defaults(handler=eval_cache_clear)


def _fail(exc: UserFacingError) -> int:
    print(f"error: {redact_known(str(exc))}", file=sys.stderr)
    return 2


# -- eval new --------------------------------------------------------------------------------


def eval_new(args: argparse.Namespace, app: App) -> int:
    try:
        return _eval_new(args, app)
    except UserFacingError as exc:
        return _fail(exc)


def _eval_new(args: argparse.Namespace, app: App) -> int:
    from ..agent.matrix_spec import parse_models, parse_variants
    from ..evals.new_file import ConversationChoice, NewEval, write_new_eval
    from .run import thread_path

    rel = thread_path(app, args.thread)
    thread_file = app.workspace.resolve(rel)
    stem = thread_file.name[:-5] if thread_file.name.endswith(".json") else thread_file.name
    out = Path(args.output).expanduser() if args.output else thread_file.with_name(f"{stem}.eval.yaml")
    thread = app.workspace.open(rel)

    def models() -> list[str]:
        if args.models:
            return [f"{p}/{m}" for p, m in parse_models(args.models)]
        choice = app.providers.choose(thread.model).model
        if choice is None:
            raise UserFacingError("The thread has no model to run.", hint="Pass --models PROVIDER/MODEL[,…].")
        return [f"{choice.provider}/{choice.id}"]

    conversation = None
    if args.conversation:
        conversation = ConversationChoice(args.user_model, args.tool_simulator, args.max_user_turns)
    elif args.user_model or args.tool_simulator or args.max_user_turns is not None:  # promptfoo's simulated-user tests take them
        conversation = ConversationChoice(args.user_model, args.tool_simulator, args.max_user_turns, asked=False)
    written = write_new_eval(NewEval(
        thread_file, Path(args.dataset), out, models,
        parse_variants(args.variants, app.workspace.root) if args.variants else None, args.repeat, args.judge,
        args.embedder, bool(getattr(args, "skip_unsupported", False)), args.scorer, conversation=conversation),
        thread, app.workspace.root)
    for note in written.notes:
        print(note, file=sys.stderr)
    kind = "scenarios" if conversation is not None else "cases"
    print(f"Wrote {out} ({written.cases} {kind}, {len(written.models)} model(s), {args.repeat} repeat(s)).")
    print(f"Run it with: llmspace eval run {out}")
    return 0


def _relative(path: Path, base: Path) -> str:
    try:
        return Path(os.path.relpath(path, base)).as_posix()
    except ValueError:  # another drive (Windows)
        return str(path)


# -- eval run --------------------------------------------------------------------------------


class ProgressLine:
    """Cells done, pass rate so far, cost and time left on stderr: redrawn on a terminal,
    one line per tenth of the cells otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last_step = -1
        self.last_draw = 0.0

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        if self.tty:
            if now - self.last_draw < 0.1 and p.done < p.total:
                return
            self.last_draw = now
            sys.stderr.write("\r" + self.line(p) + "\x1b[K")
            sys.stderr.flush()
            return
        step = p.done * 10 // max(1, p.total)
        if step != self.last_step:
            self.last_step = step
            print(self.line(p), file=sys.stderr, flush=True)

    @staticmethod
    def line(p: Progress) -> str:
        width = 24
        filled = p.done * width // max(1, p.total)
        rate = f"{p.passed / p.decided:.0%}" if p.decided else "–"
        eta = p.eta
        left = "–" if eta is None else (f"{eta:.0f}s" if eta < 90 else f"{eta / 60:.0f}m")
        return f"[{'#' * filled}{'.' * (width - filled)}] {p.done}/{p.total} cells · pass {rate} · ${p.cost:.4f} · {left} left"

    def end(self) -> None:
        if self.tty:
            sys.stderr.write("\n")
            sys.stderr.flush()


def eval_run(args: argparse.Namespace, app: App) -> int:
    progress = ProgressLine()
    try:
        return _eval_run(args, app, progress)
    except UserFacingError as exc:
        progress.end()
        return _fail(exc)


def _eval_run(args: argparse.Namespace, app: App, progress: ProgressLine) -> int:
    from ..evals import run as runmod
    from ..evals.conversation_setup import conversation_flags
    from ..evals.spec import load_spec, parse_models_value, variants_value
    from ..evals.start import start_run

    path = Path(args.file).expanduser()
    if not path.is_file():
        raise UserFacingError(f"The evaluation file {path} does not exist.", hint="Make one with `llmspace eval new THREAD --dataset FILE`.")
    spec = load_spec(path.absolute())
    flags: dict[str, Any] = {
        "dataset": str(Path(args.dataset).expanduser().absolute()) if args.dataset else None,
        "models": parse_models_value(args.models) if args.models else None,
        "variants": variants_value(args.variants, Path.cwd()) if args.variants else None,
        "repeat": args.repeat, "budget": args.budget, "concurrency": args.concurrency,
        "react": args.react, "max_turns": args.max_turns, "skip_unsupported": args.skip_unsupported,
    }
    if args.judge:
        from ..agent.matrix_spec import parse_model

        flags["judge"] = parse_model(args.judge)
    if args.embedder:
        from ..agent.matrix_spec import parse_model

        flags["embedder"] = parse_model(args.embedder)
    spec = spec.override(**flags)
    spec = conversation_flags(spec, args.user_model, _results_folder(app, args.replay) if args.replay else None, args.agent_too)
    out = results_out(args.out) if args.out else None
    started = start_run(app.runner, spec, executor=args.executor, ray_address=args.ray_address, out=out, fresh=args.fresh)
    prepared, folder, records, spec = started.prepared, started.folder, started.records, started.prepared.spec
    for note in started.notes:
        print(note, file=sys.stderr)
    for note in [*prepared.dataset.notes, *prepared.plan.notes]:
        print(f"Note: {note}", file=sys.stderr)
    print(f"Evaluating {prepared.thread_rel}: {prepared.plan.case_count} cases × {len(prepared.plan.models)} model(s) × "
          f"{len(prepared.plan.variants)} variant(s) × {prepared.plan.repeat} repeat(s) = {prepared.plan.cell_count} cells "
          f"→ {folder}" + (f" on Ray ({spec.ray_address or 'auto'})" if spec.executor == "ray" else ""),
          file=sys.stderr)
    outcome = runmod.run_cells(prepared, folder, records, concurrency=spec.concurrency, budget=spec.budget,
                             use_cache=not args.no_cache, on_progress=progress)
    progress.end()
    _print_summary(outcome)
    return outcome.exit_code


RESULT_FILES = ("journal.jsonl", "summary.json", "junit.xml", "results.csv", "results.jsonl", "report.html")


def results_out(value: str) -> Path:
    """The folder of `--out`: a new one (made later), an empty one, or the results folder of an
    earlier run (it holds journal.jsonl), whose result files are regular files. Anything else is
    refused before a file is read, written or removed there: a run starting over in a results
    folder replaces its result files, which must not be the user's own files, a file instead
    of a folder, or a named pipe that blocks the first read."""
    import stat

    out = Path(value).expanduser().absolute()
    hint = "Pass a new or empty folder, or the results folder of an earlier run."
    try:
        if not stat.S_ISDIR(out.stat().st_mode):
            raise UserFacingError(f"--out {out} is a file, not a folder.", hint=hint)
        names = set(os.listdir(out))
        for name in sorted(names.intersection(RESULT_FILES)):
            if not stat.S_ISREG(os.lstat(out / name).st_mode):
                raise UserFacingError(f"--out {out}: {name} there is not a regular file (a named pipe, folder, link or "
                                      "device); nothing in the folder was used or changed.", hint=hint)
    except FileNotFoundError:
        return out
    except OSError as exc:
        raise UserFacingError(f"Could not use --out {out}: {exc.strerror or exc}.") from None
    if names and RESULT_FILES[0] not in names:
        raise UserFacingError(f"--out {out} holds other files and is not a results folder (it has no journal.jsonl); "
                              "nothing in it was changed.", hint=hint)
    return out


def _print_summary(outcome: Any) -> None:
    s = outcome.summary
    for g in s["groups"]:
        rate = "–" if g["passRate"] is None else f"{g['passRate']:.1%}"
        ci = g["passRateCI95"]
        ci_text = f" (95% CI {ci[0]:.1%}–{ci[1]:.1%})" if ci else ""
        mark = "ok" if g["thresholdMet"] else "BELOW"
        extra = []
        if g["errors"]:
            extra.append(f"{g['errors']} errors")
        if g["pending"]:
            extra.append(f"{g['pending']} not run")
        lat = g["latencyMs"]["p50"]
        print(f"{g['label']}: {g['passed']}/{g['passed'] + g['failed']} cases pass {rate}{ci_text}, threshold {s['threshold']:.0%} {mark}; "
              f"cost ${g['cost']:.4f}" + (f"; pass^{g['k']} {g['passHatK']:.1%}" if g.get("passHatK") is not None else "")
              + (f"; p50 {lat:.0f} ms" if lat is not None else "") + (f"; {', '.join(extra)}" if extra else ""))
    if outcome.stopped_for_budget:
        print("Stopped by the budget: the cells not run are left for the next `eval run` (it resumes).")
    if outcome.interrupted:
        print("Interrupted: what finished is kept; run the same command again to resume.")
    for skipped in s.get("skipped") or []:
        cases = skipped["cases"]
        print(f"Skipped assertion {skipped['assertion']} ({len(cases)} case{'s' if len(cases) != 1 else ''}): {skipped['reason']}.")
    print(f"Results: {outcome.folder}")


# -- eval list / cache -----------------------------------------------------------------------


def eval_list(args: argparse.Namespace, app: App) -> int:
    from ..evals.journal import NAME, read_journal
    from ..evals.run import results_root
    from ..jsonio import read_json

    root = results_root(app.runner)
    folders = sorted(root.glob("*/*/")) if root.exists() else []
    if not folders:
        print("No evaluation results yet (run `llmspace eval run FILE`).")
        return 0
    for folder in folders:
        state = "finished" if read_journal(folder / NAME).finished else "unfinished"
        line = f"{folder.parent.name}/{folder.name}  {state}"
        summary = folder / "summary.json"
        if summary.exists():
            try:
                data = read_json(summary)
                rates = ", ".join(f"{g['label']} {g['passRate']:.0%}" if g.get("passRate") is not None else f"{g['label']} –"
                                  for g in data.get("groups", []))
                line += f"  {rates}"
            except (UserFacingError, OSError, KeyError, TypeError, ValueError):
                line += "  (summary unreadable)"
        print(line)
    return 0


def _results_folder(app: App, value: str) -> Path:
    """A results folder named as a path, or as NAME/STAMP under the data root's evals/."""
    from ..evals.run import results_root

    path = Path(value).expanduser()
    if path.is_dir() or path.is_absolute():
        return path.absolute()
    under = results_root(app.runner) / value
    return under if under.is_dir() else path.absolute()


def eval_compare(args: argparse.Namespace, app: App) -> int:
    try:
        return _eval_compare(args, app)
    except UserFacingError as exc:
        return _fail(exc)


def _eval_compare(args: argparse.Namespace, app: App) -> int:
    from ..evals.compare import compare_results
    from ..evals.compare_format import FORMATS, format_text
    from ..jsonio import write_bytes_atomic

    comparison = compare_results(_results_folder(app, args.result_a), _results_folder(app, args.result_b))
    text = FORMATS[args.format](comparison)
    if args.output:
        out = Path(args.output).expanduser().absolute()
        try:
            write_bytes_atomic(out, text.encode("utf-8"))
        except OSError as exc:
            raise UserFacingError(f"Could not write {out}: {exc.strerror or exc}.") from None
        summary = format_text(comparison).rstrip("\n").splitlines()[-1]
        print(f"Wrote {out}. {summary}")
    else:
        sys.stdout.write(text)
    return comparison.exit_code


def eval_report(args: argparse.Namespace, app: App) -> int:
    from ..evals.report import rewrite_report

    try:
        path = rewrite_report(_results_folder(app, args.folder))
    except UserFacingError as exc:
        return _fail(exc)
    print(f"Wrote {path}")
    return 0


def eval_cache_clear(args: argparse.Namespace, app: App) -> int:
    from ..evals.cache import clear
    from ..evals.run import cache_folder

    count, freed = clear(cache_folder(app.runner))
    print(f"Removed {count} cached answers ({freed / 1024 / 1024:.1f} MB).")
    return 0

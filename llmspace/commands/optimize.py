"""CLI command `llmspace optimize EVAL_FILE`: an evaluation's failing cases turned into a better
prompt, promoted only on a significant held-out gain (the engine is `llmspace/optimize/`).

    llmspace optimize FILE [--reflector P/M] [--target P/M] [--rollouts N] [--budget USD]
                      [--max-minutes M] [--seed S] [--split 40/30/30] [--field system|message:ID]
                      [--from RESULT] [--out DIR] [--fresh] [--no-cache]

Exit 0 promoted, 1 not promoted, 2 an error, 130 interrupted (the next run resumes). A
progress line on stderr: step, rollouts used, best validation score, cost, time left.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UserFacingError
from ..redact import redact_known

if TYPE_CHECKING:
    from ..app import App

EPILOG = """\
The original prompt runs on every case first; the cases are split (stratified by its outcome)
into training, validation and held-out parts. Each step the reflector model sees a prompt and
some training cases it failed and proposes a rewrite; a rewrite that drops, renames or adds a
{{variable}}, adds a template construct, breaks the syntax or grows past 2x is rejected unrun.
A rewrite that beats its parent on those cases runs on the validation part. At the end the best
one and the original run on the held-out part: it is promoted only when it passes more of them
and the exact McNemar test gives p < 0.05. Then <stem>.optimized.json is written beside the
thread (never overwriting one), with prompt.diff and comparison.md/.html in the results folder
$LLM_SPACE_HOME/optimize/<name>/<stamp>/. The thread itself is never changed.

Exit code: 0 promoted, 1 no significant improvement, 2 an error, 130 interrupted.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    o = sub.add_parser("optimize", help="rewrite a thread's prompt from an evaluation's failures, promoted only on a significant gain",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Search for a better prompt with a reflector model, measured on cases it did not learn from.")
    o.add_argument("file", metavar="EVAL_FILE", help="the evaluation file (.eval.yaml or .eval.json)")
    o.add_argument("--reflector", metavar="P/M", help="the model that proposes prompts (default: the judge, else the target)")
    o.add_argument("--target", metavar="P/M", help="which of the file's models to optimize for (default: the first)")
    o.add_argument("--rollouts", type=int, default=150, metavar="N", help="cells the search may run (default 150)")
    o.add_argument("--budget", type=float, metavar="USD", help="stop the search before this cost")
    o.add_argument("--max-minutes", type=float, metavar="M", help="stop the search after M minutes (the gate still runs)")
    o.add_argument("--seed", type=int, default=0, metavar="S", help="the seed of the split and the search (default 0)")
    o.add_argument("--split", default="40/30/30", metavar="TRAIN/VAL/HOLDOUT", help="percentages (default 40/30/30)")
    o.add_argument("--field", default="system", metavar="system|message:ID", help="what is rewritten (default: the system prompt)")
    o.add_argument("--from", dest="baseline", metavar="RESULT",
                   help="a results folder of this evaluation (`eval run`) whose cells of the target are the baseline")
    o.add_argument("--out", metavar="DIR", help="the results folder")
    o.add_argument("--fresh", action="store_true", help="start a new results folder instead of resuming")
    o.add_argument("--no-cache", action="store_true", help="call the models even when an answer is cached")
    o.set_defaults(handler=optimize_command)


class _Line:
    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()

    def __call__(self, text: str) -> None:
        sys.stderr.write(("\r\x1b[K" + text) if self.tty else text + "\n")
        sys.stderr.flush()

    def end(self) -> None:
        if self.tty:
            sys.stderr.write("\n")


def optimize_command(args: argparse.Namespace, app: App) -> int:
    line = _Line()
    try:
        return _optimize(args, app, line)
    except UserFacingError as exc:
        line.end()
        print(f"error: {redact_known(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        line.end()
        print("Interrupted: what finished is kept; run the same command again to resume.", file=sys.stderr)
        return 130


def _result_folder(app: App, value: str) -> Path:
    """`--from`: a path, or NAME/STAMP under $LLM_SPACE_HOME/evals."""
    from ..evals.run import results_root

    path = Path(value).expanduser()
    if not path.is_dir() and (results_root(app.runner) / value).is_dir():
        path = results_root(app.runner) / value
    if not path.is_dir():
        raise UserFacingError(f"--from {value} is not a results folder.", hint="`llmspace eval list` shows them.")
    return path.absolute()


def _optimize(args: argparse.Namespace, app: App, line: _Line) -> int:
    from ..agent.matrix_spec import parse_model
    from ..optimize.engine import Options, optimize
    from ..optimize.split import parse_split

    path = Path(args.file).expanduser().absolute()
    if not path.is_file():
        raise UserFacingError(f"The evaluation file {path} does not exist.", hint="Make one with `llmspace eval new THREAD --dataset FILE`.")
    if args.rollouts < 1:
        raise UserFacingError(f"--rollouts must be 1 or more, not {args.rollouts}.")
    opts = Options(path, parse_model(args.reflector) if args.reflector else None, parse_model(args.target) if args.target else None,
                   args.rollouts, args.budget, args.max_minutes, args.seed, parse_split(args.split), args.field,
                   Path(args.out).expanduser().absolute() if args.out else None, args.fresh, not args.no_cache,
                   baseline=_result_folder(app, args.baseline) if args.baseline else None)
    result = optimize(app.runner, opts, on_progress=line, on_note=lambda s: print(s, file=sys.stderr))
    line.end()
    if result.interrupted:
        print("Interrupted: what finished is kept; run the same command again to resume.", file=sys.stderr)
        return 130
    v = result.verdict
    if v is None:
        print(f"No significant improvement: {result.summary.get('verdict', {}).get('reason', '')}")
    else:
        for w in v.warnings:
            print(f"warning: {w}", file=sys.stderr)
        print(f"Held-out: original {v.passed_original}/{v.pairs}, candidate {v.passed_candidate}/{v.pairs} "
              f"(pass→fail {v.worse}, fail→pass {v.better}); McNemar p = {v.p:.4g}"
              + (f"; judge scores {v.judge.mean:+.2f} (p = {v.judge.p:.3g})" if v.judge is not None else ""))
        print("Promoted." if v.promoted else "No significant improvement; the best candidate is kept for you to read.")
    if result.optimized is not None:
        print(f"Optimized thread: {result.optimized}")
    print(f"Results: {result.folder}")
    return result.exit_code

"""CLI command `llmspace matrix THREAD …`: run a thread over models × variants × repeats.

    llmspace matrix THREAD --models P/M,P/M [--variants FILE | --variants "NAME=V;NAME=V" …]
                    [--repeat N] [--budget USD] [--concurrency K] [--react] [--rerun-failed]

Prints one line per finished cell, then where the reports are. Exit code 0 when every cell
that ran succeeded, 1 when some failed or the budget stopped the matrix. See agent/matrix.py
for the budget rule and the files written.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import UserFacingError

if TYPE_CHECKING:
    from ..agent.matrix_spec import MatrixCell
    from ..app import App

EPILOG = """\
Variants: each --variants value is either a JSON file ({"name": {"VAR": "value"}, …} or
[{"name": …, "variables": {…}}, …]) or one variant written as NAME=VALUE pairs separated by
';' (e.g. --variants "tone=formal;lang=en" --variants "tone=casual;lang=en"). Without
--variants the thread runs once per model and repeat with its own variable values.

Budget: before launching a cell the cost of one cell is estimated from the cells finished so
far (the first cell runs alone); no cell starts when spent + estimate would exceed --budget.
Cells not started are reported as skipped.

Files: every cell is saved as a run in the thread's history (which keeps the newest 20), and
also kept in the hidden results file .<stem>.matrix.json beside the thread; the reports are
<stem>.matrix.md and <stem>.matrix.html beside the thread. --rerun-failed re-runs only the
failed cells of the last matrix and rewrites the reports.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("matrix", help="run a thread over several models and variable variants, with a report",
                       description="Run THREAD over models × variable variants × repeats on the worker pool.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("thread", metavar="THREAD", help="workspace path of the thread")
    p.add_argument("--models", metavar="P/M,P/M", help="comma-separated PROVIDER/MODEL list (required unless --rerun-failed)")
    p.add_argument("--variants", action="append", default=[], metavar="FILE|NAME=V;NAME=V",
                   help="a JSON file of variants, or one variant as NAME=VALUE pairs (repeatable)")
    p.add_argument("--repeat", type=int, default=1, metavar="N", help="runs per model and variant (default 1)")
    p.add_argument("--budget", type=float, default=None, metavar="USD", help="stop launching cells before this cost would be exceeded")
    p.add_argument("--concurrency", type=int, default=None, metavar="K", help="cells running at once (default 2)")
    p.add_argument("--react", action="store_true", help="let each cell run tools and call the model again (ReAct)")
    p.add_argument("--auto-tools", action="store_true", help="run the tools of a turn once, then stop")
    p.add_argument("--max-turns", type=int, default=50, metavar="N", help="ReAct turn limit per cell (default 50)")
    p.add_argument("--rerun-failed", action="store_true", help="re-run only the failed cells of the last matrix")
    p.set_defaults(handler=matrix_command)


def _print_cell(cell: MatrixCell) -> None:
    from ..core.timing import duration_label
    from ..core.usage import format_cost

    extra = []
    if cell.usage:
        extra.append(f"{cell.usage.get('input', 0)} in / {cell.usage.get('output', 0)} out")
    if cell.cost:
        extra.append(format_cost(cell.cost) or "")
    if cell.duration_ms is not None:
        extra.append(duration_label(cell.duration_ms))
    tail = f"  ({', '.join(e for e in extra if e)})" if extra else ""
    line = f"[{cell.status}] {cell.key}{tail}"
    if cell.error:
        line += f": {cell.error}"
    print(line, flush=True)


def matrix_command(args: argparse.Namespace, app: App) -> int:
    from ..agent.matrix import rerun_failed, run_matrix, sibling_paths
    from ..agent.matrix_spec import MatrixSpec, parse_models, parse_variants
    from .run import thread_path

    rel = thread_path(app, args.thread)
    if args.rerun_failed:
        if args.models or args.variants:
            raise UserFacingError("--rerun-failed re-uses the models and variants of the last matrix; drop --models/--variants.")
        result = rerun_failed(app.runner, rel, budget=args.budget, concurrency=args.concurrency, on_cell=_print_cell)
    else:
        if not args.models:
            raise UserFacingError("Pass --models PROVIDER/MODEL[,PROVIDER/MODEL…].", hint="See `llmspace models` for what is configured.")
        spec = MatrixSpec(models=parse_models(args.models), variants=parse_variants(args.variants, app.workspace.root),
                          repeat=args.repeat, budget=args.budget, concurrency=args.concurrency or 2,
                          react=args.react, auto_tools=args.auto_tools, max_turns=args.max_turns)
        result = run_matrix(app.runner, rel, spec, on_cell=_print_cell)
    paths = sibling_paths(app.workspace, rel)
    counts = {s: sum(c.status == s for c in result.cells) for s in ("completed", "failed", "skipped")}
    print(f"Matrix: {counts['completed']} completed, {counts['failed']} failed, {counts['skipped']} skipped; "
          f"spent ${result.spent:.6f}" + (" (stopped by the budget)" if result.stopped_for_budget else ""))
    print(f"Report: {paths['md']}\n        {paths['html']}")
    return 1 if counts["failed"] or result.stopped_for_budget else 0

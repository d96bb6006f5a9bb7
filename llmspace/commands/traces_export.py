"""CLI `traces export THREAD [--run ID] [--endpoint URL] [--capture | --no-capture]`: sends a recorded
run (from the thread's run history, default the latest) to an OpenTelemetry collector as GenAI spans,
made from the run's trace files under `traces/calls/` with the same mapping a live run uses
(`llmspace/traces/genai_spans.py`), whether or not tracing was on when it ran.

The endpoint, headers and content capture come from `settings/tracing.json` (its `enabled` is not
needed), the `OTEL_EXPORTER_OTLP_*` variables and `--endpoint`; the command waits at most 5 s for
the collector. Exit 1 when the run has no trace files left or the collector did not take the spans.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..errors import UserFacingError

if TYPE_CHECKING:
    from ..app import App

FLUSH_SECONDS = 5.0


def add_parser(tsub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = tsub.add_parser("export", help="send a recorded run to an OpenTelemetry collector (Phoenix, Langfuse, …)")
    p.add_argument("thread", metavar="THREAD")
    p.add_argument("--run", default=None, metavar="ID", help="the run-history entry (default: the latest run)")
    p.add_argument("--endpoint", default=None, metavar="URL",
                   help="a base URL (gets /v1/traces) or a full traces URL; default: settings/tracing.json")
    capture = p.add_mutually_exclusive_group()
    capture.add_argument("--capture", dest="capture", action="store_true", default=None,
                         help="send messages, tool arguments and results (default: the settings' captureContent)")
    capture.add_argument("--no-capture", dest="capture", action="store_false")
    p.set_defaults(handler=export_run)


def export_run(args: argparse.Namespace, app: App) -> int:
    from ..core.history import run_status, run_traces
    from ..providers.traces import TraceWriter
    from ..traces.otel_start import start_exporter
    from .history import load

    rel, thread = load(app, args.thread)
    runs = thread.runHistory or []
    run = next((r for r in runs if r.id == args.run), None) if args.run else (runs[-1] if runs else None)
    if run is None:
        which = f"run {args.run!r}" if args.run else "any run"
        raise UserFacingError(f"{rel} has no {which} in its run history. `llmspace history {rel}` lists its runs.")
    reader = TraceWriter(app.root)
    docs = [d for d in (reader.load(n) for n in run_traces(run)) if d is not None]
    if not docs:
        print(f"{rel}: run {run.id} has no trace files left under traces/calls/ (recorded without them, or pruned).",
              file=sys.stderr)
        return 1
    problems: list[str] = []
    exporter = start_exporter(app.root.settings, lambda: app.secrets, problems.append,
                              endpoint=args.endpoint, capture=args.capture, force=True)
    if exporter is None:
        print("\n".join(problems), file=sys.stderr)
        return 1
    model = run.thread.model
    count = exporter.emit_recorded_run(str(run.id or docs[0].get("runId") or ""), title=thread.title or rel,
                                       provider=model.provider if model else str(docs[0].get("provider") or ""),
                                       model=model.id if model else str(docs[0].get("model") or ""),
                                       thread_path=rel, docs=docs, status=run_status(run) or "completed")
    sent = exporter.flush(FLUSH_SECONDS)
    exporter.close(0.5)
    if not sent:
        print("\n".join(problems) or f"The collector at {exporter.target.url} did not take the spans within "
              f"{FLUSH_SECONDS:.0f} s.", file=sys.stderr)
        return 1
    print(f"sent {count} spans of run {run.id} to {exporter.shown_url}")
    return 0

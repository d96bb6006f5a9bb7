"""CLI command group `traces`: the trace workbench from the command line (see llmspace/cli.py).

`PROJECT` is a trace project's id or its name.

- `traces projects [--json]` — one line per project: id, source badge, name.
- `traces new NAME [--source langfuse|otlp|phoenix]` — a new project; prints its id.
- `traces new NAME --langfuse URL` — a project connected to Langfuse, made once
  `/api/public/projects` answers; the keys come from `LANGFUSE_PUBLIC_KEY` and
  `LANGFUSE_SECRET_KEY`, else are asked on a terminal (never on the command line), and the
  secret key goes to the secret store. `--phoenix URL [--phoenix-project P]` (default
  `default`): connected to Phoenix, its API key from `PHOENIX_API_KEY`, else asked on a
  terminal when Phoenix answers 401.
- `traces search PROJECT [--text T] [--from/--to ISO-8601] [--user U] [--session S] [--name N]
  [--environment E] [--filter EXPR] [--limit N] [--json]` — a connected project's traces (default:
  the last 7 days, 50 at most): one per line, `TRACE_ID  TIME  NAME`. `--filter` is Phoenix's
  filter expression.
- `traces sync PROJECT TRACE_ID… [--rebuild [--yes]]` — fetches each trace whole and upserts it;
  an edited workbench is kept (`--rebuild` replaces it with one built from the new data, after a
  yes on a terminal or `--yes`). Exit 1 when a trace was skipped.
- `traces import PROJECT FILE…` — Langfuse exports, OTLP JSON (or JSON Lines) and Phoenix span
  listings; prints `imported FILE -> KEY` per trace, its notes, `skipped FILE: reason` per
  refused file and the warning `llmspace import` gives about local files a workbench's system
  prompt would read. Exit 1 when a file was refused (the others are imported).
- `traces list PROJECT [--json]` — one trace key per line (`--json`: the trace records).
- `traces open PROJECT KEY` — prints the workbench's path, `trace/<projectId>/<key>/workbench.json`,
  which `run`, `history`, `compare`, `fork`, `eval new` take like any thread path.
- `traces to-thread PROJECT KEY [--folder F]` — copies the workbench into the workspace as a
  normal thread; prints its path.
- `traces remove PROJECT [KEY]` — moves the project (or one trace) to the trash.
- `traces export THREAD [--run ID] [--endpoint URL]` — sends a recorded run to an OpenTelemetry
  collector (`llmspace/commands/traces_export.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .parsers import help_handler

if TYPE_CHECKING:
    from ..app import App

BADGES = {"langfuse": "Langfuse", "otlp": "OpenTelemetry", "phoenix": "Phoenix"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `traces`."""
    parser = sub.add_parser("traces", help="trace projects: production traces from files as editable threads")
    tsub = parser.add_subparsers(dest="traces_command", metavar="ACTION")
    parser.set_defaults(handler=help_handler(parser))
    p = tsub.add_parser("projects", help="list the trace projects")
    p.add_argument("--json", action="store_true", help="print the project records as JSON")
    p.set_defaults(handler=list_projects)
    p = tsub.add_parser("new", help="make a trace project")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--source", default="langfuse", choices=sorted(BADGES),
                   help="what its files hold (default langfuse; an empty project takes the type of the first file imported)")
    server = p.add_mutually_exclusive_group()
    server.add_argument("--langfuse", metavar="URL", help="connect to Langfuse at URL (keys from LANGFUSE_PUBLIC_KEY and "
                        "LANGFUSE_SECRET_KEY, or asked on a terminal)")
    server.add_argument("--phoenix", metavar="URL", help="connect to Arize Phoenix at URL (an API key from PHOENIX_API_KEY "
                        "or a terminal when its auth is on)")
    p.add_argument("--phoenix-project", default="default", metavar="P", help="the Phoenix project (default: default)")
    p.set_defaults(handler=new_project)
    p = tsub.add_parser("search", help="search a connected project's traces on its server")
    p.add_argument("project", metavar="PROJECT")
    p.add_argument("--text", default="", metavar="T", help="in the trace id, name, user or session (ignoring case)")
    p.add_argument("--from", dest="start", default=None, metavar="ISO-8601", help="from this time (default: 7 days ago)")
    p.add_argument("--to", dest="end", default=None, metavar="ISO-8601", help="until this time (default: now)")
    p.add_argument("--user", default="", metavar="U")
    p.add_argument("--session", default="", metavar="S")
    p.add_argument("--name", default="", metavar="N", help="the trace's name, exactly")
    p.add_argument("--environment", default="", metavar="E", help="Langfuse's environment")
    p.add_argument("--filter", default="", metavar="EXPR", help="a Phoenix filter expression, such as "
                   "\"any(span.span_kind == 'TOOL' for span in spans)\"")
    p.add_argument("--limit", type=int, default=50, metavar="N", help="at most N traces (1-1000, default 50)")
    p.add_argument("--json", action="store_true", help="print the trace summaries as JSON")
    p.set_defaults(handler=search_traces)
    p = tsub.add_parser("sync", help="fetch traces of a connected project by id and store them (upsert)")
    p.add_argument("project", metavar="PROJECT")
    p.add_argument("trace_ids", nargs="+", metavar="TRACE_ID")
    p.add_argument("--rebuild", action="store_true", help="rebuild edited workbenches from the new data (edits are lost)")
    p.add_argument("--yes", action="store_true", help="with --rebuild: do not ask")
    p.set_defaults(handler=sync_traces)
    p = tsub.add_parser("import", help="import trace files (Langfuse exports, OTLP JSON or JSON Lines, Phoenix span listings)")
    p.add_argument("project", metavar="PROJECT")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(handler=import_traces)
    p = tsub.add_parser("list", help="list a project's traces, one key per line")
    p.add_argument("project", metavar="PROJECT")
    p.add_argument("--json", action="store_true", help="print the trace records as JSON")
    p.set_defaults(handler=list_traces)
    p = tsub.add_parser("open", help="print the workbench path of a trace (a thread path `llmspace run` takes)")
    p.add_argument("project", metavar="PROJECT")
    p.add_argument("key", metavar="KEY")
    p.set_defaults(handler=open_trace)
    p = tsub.add_parser("to-thread", help="copy a trace's workbench into the workspace as a normal thread")
    p.add_argument("project", metavar="PROJECT")
    p.add_argument("key", metavar="KEY")
    p.add_argument("--folder", default="", metavar="F", help="workspace folder for the thread (created if missing)")
    p.set_defaults(handler=to_thread)
    p = tsub.add_parser("remove", help="move a trace project, or one of its traces, to the trash")
    p.add_argument("project", metavar="PROJECT")
    p.add_argument("key", nargs="?", default=None, metavar="KEY")
    p.set_defaults(handler=remove)
    from .traces_export import add_parser

    add_parser(tsub)


def _print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def _public(project: dict[str, Any]) -> dict[str, Any]:
    """A project without stored keys (a connected project of the original keeps them in plain text)."""
    source = {k: v for k, v in project.get("source", {}).items() if k not in ("publicKey", "secretKey")}
    return {**project, "source": source}


def _notices(app: App) -> None:
    """What reading projects changed on disk (an original project's keys moved to the secret store)."""
    store = app.trace_projects
    for notice in store.notices:
        print(f"note: {notice}", file=sys.stderr)
    store.notices.clear()


def list_projects(args: argparse.Namespace, app: App) -> int:
    from ..core.names import shown_name

    projects = [_public(p) for p in app.trace_projects.projects()]
    _notices(app)
    if args.json:
        _print_json(projects)
        return 0
    if not projects:
        print("No trace projects yet. Make one with `llmspace traces new NAME`, then import trace files into it.")
    for project in projects:
        source = project["source"]
        badge = BADGES.get(str(source.get("type")), str(source.get("type")))
        if source.get("mode") == "connected":
            badge += f" (connected{_last_sync(source)})"
        print(f"{project['id']}  {badge}  {shown_name(str(project.get('name', '')))}")
    return 0


def _last_sync(source: dict[str, Any]) -> str:
    from datetime import datetime

    at = source.get("lastSyncAt")
    if not isinstance(at, int | float):
        return ", never synced"
    when = datetime.fromtimestamp(at / 1000).strftime("%Y-%m-%d %H:%M")
    status = "failed" if source.get("lastSyncStatus") == "error" else "ok"
    return f", last sync {when} {status}"


def new_project(args: argparse.Namespace, app: App) -> int:
    from ..traces.connect import connect_langfuse, connect_phoenix
    from ..traces.remote import RemoteError

    store = app.trace_projects
    if args.langfuse:
        public = os.environ.get("LANGFUSE_PUBLIC_KEY", "").strip() or _ask("Langfuse public key (pk-lf-…): ", secret=False)
        secret = os.environ.get("LANGFUSE_SECRET_KEY", "").strip() or _ask("Langfuse secret key (sk-lf-…): ", secret=True)
        project = connect_langfuse(store, args.name, args.langfuse, public, secret)
        where = f"Langfuse project {project['source'].get('langfuseProjectName') or '?'}"
    elif args.phoenix:
        key = os.environ.get("PHOENIX_API_KEY", "").strip() or None
        try:
            project = connect_phoenix(store, args.name, args.phoenix, args.phoenix_project, key)
        except RemoteError as exc:
            if exc.what != "key" or key:
                raise
            if not sys.stdin.isatty():
                raise RemoteError(exc.message.replace("rejected the key", "needs an API key (its auth is on) and got none"),
                                  "key", status=exc.status, hint="Set PHOENIX_API_KEY to a Phoenix API key; keys are "
                                  "never taken on the command line.") from None
            project = connect_phoenix(store, args.name, args.phoenix, args.phoenix_project,
                                      _ask("Phoenix API key: ", secret=True))
        where = f"Phoenix project {project['source']['phoenixProject']}"
    else:
        print(store.create_project(args.name, args.source)["id"])
        return 0
    print(project["id"])
    print(f"connected to {where}; keys kept in {app.secrets.where}", file=sys.stderr)
    return 0


def _ask(prompt: str, *, secret: bool) -> str:
    """A key typed on the terminal (hidden when secret); without a terminal, an error naming the env vars."""
    import getpass

    from ..errors import UserFacingError

    if not sys.stdin.isatty():
        raise UserFacingError(f"No terminal to ask for the {prompt.split(' (')[0].rstrip(': ')}.",
                              hint="Set LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY (or PHOENIX_API_KEY); keys are never "
                                   "taken on the command line.")
    value = (getpass.getpass(prompt) if secret else input(prompt)).strip()
    if not value:
        raise UserFacingError("No key given; nothing was made.")
    return value


def _iso_arg(value: str | None, flag: str) -> str | None:
    """An ISO-8601 time as UTC text with Z (a time without a zone is local time)."""
    from datetime import UTC, datetime

    from ..errors import UserFacingError

    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UserFacingError(f"{flag} {value!r} is not an ISO-8601 time.", hint="Write it like 2026-12-01T09:30 or 2026-12-01.") from None
    if when.tzinfo is None:
        when = when.astimezone()
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def search_traces(args: argparse.Namespace, app: App) -> int:
    from datetime import UTC, datetime, timedelta

    from ..core.names import shown_name
    from ..errors import UserFacingError
    from ..traces.connect import search
    from ..traces.langfuse_api import SearchFilters

    if not 1 <= args.limit <= 1000:
        raise UserFacingError(f"--limit {args.limit} is out of range; give 1 to 1000.")
    store = app.trace_projects
    project = store.find_project(args.project)
    _notices(app)
    start = _iso_arg(args.start, "--from")
    end = _iso_arg(args.end, "--to")
    if start is None:
        base = datetime.fromisoformat(end.replace("Z", "+00:00")) if end else datetime.now(UTC)
        start = _iso_arg((base - timedelta(days=7)).isoformat(), "--from")
    filters = SearchFilters(start=start, end=end, text=args.text, name=args.name, user=args.user, session=args.session,
                            environment=args.environment, limit=args.limit, expression=args.filter)
    found = search(store, project, filters)
    if args.json:
        _print_json(found)
        return 0
    for trace in found:
        print(f"{trace['id']}  {trace.get('timestamp') or '-'}  {shown_name(str(trace.get('name') or ''))}")
    if not found:
        print(f"no traces from {start}" + (f" to {end}" if end else "") + " match", file=sys.stderr)
    return 0


def sync_traces(args: argparse.Namespace, app: App) -> int:
    from ..errors import UserFacingError
    from ..traces.connect import sync

    store = app.trace_projects
    project = store.find_project(args.project)
    _notices(app)
    if args.rebuild and not args.yes:
        if not sys.stdin.isatty():
            raise UserFacingError("--rebuild replaces edited workbenches; confirm with --yes when there is no terminal.")
        answer = input("Rebuild the workbench of each trace from the new data? Your edits to them are lost. [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing synced", file=sys.stderr)
            return 1
    report = sync(store, project, args.trace_ids, rebuild=args.rebuild)
    words = {"built": "new", "rebuilt": "workbench rebuilt",
             "kept": "workbench kept: it was edited (--rebuild replaces it)"}
    for record, state in report.synced:
        print(f"synced {record['id']} -> {record['key']} ({words[state]})")
    for trace_id, reason in report.skipped:
        print(f"skipped {trace_id}: {reason}")
    print(f"{len(report.synced)} trace(s) synced into {project['name']} ({project['id']})")
    return 1 if report.skipped else 0


def import_traces(args: argparse.Namespace, app: App) -> int:
    from ..core.names import shown_name
    from ..core.templating.file_reads import local_file_reads
    from ..core.threadio import parse_thread
    from ..jsonio import read_file_bytes
    from ..traces.workbench import pseudo_path

    store = app.trace_projects
    project = store.find_project(args.project)
    report = store.import_files(project["id"], [Path(f).expanduser() for f in args.files])
    for record in report.imported:
        rel = pseudo_path(project["id"], record["key"])
        print(f"imported {shown_name(str(record['source'].get('fileName', '')))} -> {record['key']}")
        for note in report.notes.get(record["key"], []):
            print(f"  note: {note}")
        path = store.workbench_path(project["id"], record["key"])
        reads = local_file_reads(parse_thread(read_file_bytes(path, shown=rel), rel))
        if reads:
            print(f"  warning: {reads.describe(rel)}")
    for name, reason in report.refused:
        print(f"skipped {shown_name(name)}: {reason}")
    print(f"{len(report.imported)} trace(s) imported into {project['name']} ({project['id']})")
    return 1 if report.refused else 0


def list_traces(args: argparse.Namespace, app: App) -> int:
    store = app.trace_projects
    project = store.find_project(args.project)
    records = store.traces(project["id"])
    _notices(app)
    if args.json:
        _print_json(records)
    else:
        for record in records:
            print(record.get("key"))
    return 0


def open_trace(args: argparse.Namespace, app: App) -> int:
    from ..traces.workbench import pseudo_path

    store = app.trace_projects
    project = store.find_project(args.project)
    store.workbench_path(project["id"], args.key)  # made from raw.json on first open
    print(pseudo_path(project["id"], args.key))
    return 0


def to_thread(args: argparse.Namespace, app: App) -> int:
    from ..core.names import shown_name
    from ..traces.workbench import copy_to_workspace

    store = app.trace_projects
    project = store.find_project(args.project)
    folder = args.folder.strip().rstrip("/")
    rel, warning = copy_to_workspace(store, app.workspace, project["id"], args.key, folder)
    print(shown_name(rel))
    if warning:
        print(f"  warning: {warning}")
    return 0


def remove(args: argparse.Namespace, app: App) -> int:
    store = app.trace_projects
    project = store.find_project(args.project)
    if args.key:
        where = store.remove_trace(project["id"], args.key)
        what = f"trace {args.key}"
    else:
        where = store.remove_project(project["id"])
        what = f"trace project {project['name']} ({project['id']})"
    print(f"moved {what} to the trash" + ("" if where == "os-trash" else f" ({where})"))
    return 0

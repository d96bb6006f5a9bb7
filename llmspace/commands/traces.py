"""CLI command group `traces`: the trace workbench from the command line (see llmspace/cli.py).

`PROJECT` is a trace project's id or its name.

- `traces projects [--json]` — one line per project: id, source badge, name.
- `traces new NAME [--source langfuse|otlp|phoenix]` — a new project; prints its id.
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
"""

from __future__ import annotations

import argparse
import json
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
    p.set_defaults(handler=new_project)
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


def _print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def _public(project: dict[str, Any]) -> dict[str, Any]:
    """A project without stored keys (a connected project of the original keeps them in plain text)."""
    source = {k: v for k, v in project.get("source", {}).items() if k not in ("publicKey", "secretKey")}
    return {**project, "source": source}


def list_projects(args: argparse.Namespace, app: App) -> int:
    from ..core.names import shown_name

    projects = [_public(p) for p in app.trace_projects.projects()]
    if args.json:
        _print_json(projects)
        return 0
    if not projects:
        print("No trace projects yet. Make one with `llmspace traces new NAME`, then import trace files into it.")
    for project in projects:
        source = project["source"]
        badge = BADGES.get(str(source.get("type")), str(source.get("type")))
        if source.get("mode") == "connected":
            badge += " (connected)"
        print(f"{project['id']}  {badge}  {shown_name(str(project.get('name', '')))}")
    return 0


def new_project(args: argparse.Namespace, app: App) -> int:
    project = app.trace_projects.create_project(args.name, args.source)
    print(project["id"])
    return 0


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

"""CLI command group `threads`: `llmspace threads list [FOLDER]`, `threads new`, `threads seed`
(see llmspace/cli.py).

Prints the workspace tree: folders (with a trailing `/`) first, then thread titles, each
followed by its workspace path; two spaces of indent per level.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .parsers import help_handler

if TYPE_CHECKING:
    from ..app import App
    from ..core.workspace import Entry


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `threads list`."""
    parser = sub.add_parser("threads", help="list the threads in the workspace")
    tsub = parser.add_subparsers(dest="threads_command", metavar="ACTION")
    parser.set_defaults(handler=help_handler(parser))
    lst = tsub.add_parser("list", help="show the workspace tree with thread titles")
    lst.add_argument("folder", nargs="?", default="", help="a folder inside the workspace (default: all)")
    lst.set_defaults(handler=list_threads)
    new = tsub.add_parser("new", help="create a thread (blank, or from an example)")
    new.add_argument("--example", default=None, help="example id (see `threads examples`); default: a blank thread")
    new.add_argument("--folder", default="", help="workspace folder to create it in")
    new.add_argument("--name", default=None, help="file name without .json (default: the example's or 'untitled')")
    new.set_defaults(handler=new_thread)
    ex = tsub.add_parser("examples", help="list the examples `threads new --example` accepts")
    ex.set_defaults(handler=list_examples)
    seed = tsub.add_parser("seed", help="write the example threads into an empty workspace (as the first start does)")
    seed.set_defaults(handler=seed_workspace)


def format_tree(entries: list[Entry], indent: int = 0) -> list[str]:
    """Lines of the tree: `title/` for folders, `title  (path)` for threads (bidi and control
    characters in names shown as `\\u202E`-style escapes)."""
    from ..core.names import shown_name

    lines: list[str] = []
    pad = "  " * indent
    for e in entries:
        if e.is_dir:
            lines.append(f"{pad}{shown_name(e.title)}/")
            lines.extend(format_tree(e.children or [], indent + 1))
        else:
            lines.append(f"{pad}{shown_name(e.title)}  ({shown_name(e.rel)})")
    return lines


def list_threads(args: argparse.Namespace, app: App) -> int:
    workspace = app.workspace
    folder = args.folder.strip().rstrip("/")  # a leading / is an absolute path: refused
    if folder and not workspace.resolve(folder).is_dir():
        from ..errors import UserFacingError

        raise UserFacingError(f"{folder!r} is not a folder in the workspace ({workspace.root}).",
                              hint="Run `llmspace threads list` to see the folders.")
    lines = format_tree(workspace.list_tree(folder))
    print("\n".join(lines) if lines else f"(no threads in {workspace.root / folder if folder else workspace.root})")
    return 0


def list_examples(args: argparse.Namespace, app: App) -> int:
    from ..core.examples import catalogue

    for example in catalogue():
        print(f"{example.id}  {example.label}")
    return 0


def new_thread(args: argparse.Namespace, app: App) -> int:
    from ..core.examples import catalogue
    from ..errors import UserFacingError

    thread = None
    if args.name and args.name.strip().lower().endswith(".json"):
        args.name = args.name.strip()[:-5]  # `--name notes.json` means notes.json, not notes.json.json
    stem = args.name or "untitled"
    if args.example:
        found = {e.id: e for e in catalogue()}.get(args.example)
        if found is None:
            raise UserFacingError(f"Unknown example {args.example!r}.", hint="Run `llmspace threads examples` to list them.")
        thread = found.build()
        stem = args.name or found.file_stem
    rel = app.workspace.create_thread(args.folder.strip().rstrip("/"), stem, thread)
    print(rel)
    return 0


def seed_workspace(args: argparse.Namespace, app: App) -> int:
    created = app.workspace.seed_examples()
    print("\n".join(created) if created else "nothing seeded: the workspace was already started once")
    return 0

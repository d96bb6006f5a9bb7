"""CLI command group `import`: `llmspace import FILE... [--into FOLDER]` (see llmspace/cli.py).

Imports native, OpenAI-style, Anthropic-style, Aurora, bare-array and `.jsonl` exports as
new threads and prints one line per file: `imported SRC -> PATH[, PATH…]` or
`skipped SRC: reason`, then `  warning: thread PATH would read these local files when run: …`
for each new thread whose templates or file variables read local files (check them before
running it). Exit code 0 when every file imported something, 1 otherwise
(the other files are still imported).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..app import App


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `import`."""
    parser = sub.add_parser("import", help="import thread exports (JSON or JSON Lines) into the workspace")
    parser.add_argument("files", nargs="+", metavar="FILE", help="files to import")
    parser.add_argument("--into", default="", metavar="FOLDER", help="workspace folder for the new threads (created if missing)")
    parser.set_defaults(handler=run_import)


def model_resolver(app: App) -> Callable[[str], dict[str, str] | None] | None:
    """Foreign model id -> {provider, id} of the first configured provider offering it (None if unknown)."""
    try:
        providers = app.models.providers()
        index: dict[str, dict[str, str]] = {}
        for provider in providers:
            for model in provider.enabled_models():
                index.setdefault(model.id, {"provider": provider.id, "id": model.id})
    except Exception:  # no model settings yet: import without models
        return None
    return index.get


def run_import(args: argparse.Namespace, app: App) -> int:
    from ..core.importers import import_files
    from ..core.names import shown_name

    into = args.into.strip().rstrip("/")  # a leading / is an absolute path: refused, not made relative
    outcomes = import_files([Path(f) for f in args.files], app.workspace, into=into,
                            resolve_model=model_resolver(app))
    all_ok = True
    for o in outcomes:
        if o.created:
            print(f"imported {shown_name(str(o.source))} -> {', '.join(shown_name(c) for c in o.created)}")
        else:
            all_ok = False
            print(f"skipped {shown_name(str(o.source))}: {o.skipped}")
        for problem in o.problems if o.created else []:
            print(f"  note: {problem}")
        for warning in o.warnings:
            print(f"  warning: {warning}")
    done = sum(1 for o in outcomes if o.created)
    print(f"{done} of {len(outcomes)} file(s) imported into {app.workspace.root / into}")
    return 0 if all_ok else 1

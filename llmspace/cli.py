"""The command line: `llmspace <command> …`, backed by the same services as the GUI.

Each command group lives in `llmspace/commands/<group>.py` and exposes
`register(subparsers)`; the handler a group registers receives `(args, app)` and returns
an exit code. Errors: `UserFacingError` messages go to stderr as they are (exit 1); any
other exception is logged and reported as an internal error (exit 2).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Callable

from . import __version__
from .errors import UserFacingError, describe_exception

# Command groups, in help order. Each module has `register(subparsers) -> None`.
COMMAND_MODULES = (
    "threads",
    "importing",
    "schema",
    "run",
    "models",
    "tools",
    "mcp",
    "skills",
    "render",
    "history",
    "matrix",
)

Handler = Callable[..., int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="llmspace", description="LLM Space: write, run, debug and evaluate prompts and agents.")
    parser.add_argument("--version", action="version", version=f"llmspace {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"llmspace.commands.{name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    from .app import App

    app = App.from_env()
    try:
        return int(handler(args, app) or 0)
    except UserFacingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the one error boundary of the command line
        print(f"error: {describe_exception(exc, app.log_file)}", file=sys.stderr)
        return 2
    finally:
        app.close()

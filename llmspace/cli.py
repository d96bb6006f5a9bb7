"""The command line: `llmspace <command> …`, backed by the same services as the GUI.

Each command group lives in `llmspace/commands/<group>.py` and exposes
`register(subparsers)`; the handler a group registers receives `(args, app)` and returns
an exit code. Errors: `UserFacingError` messages go to stderr as they are (exit 1); any
other exception is logged and reported as an internal error (exit 2). Log records of a
command go to `logs/llmspace.log`, never to the terminal; the log and the errors printed
here have every known secret removed (`errors.error_text`, which the GUI's error path uses too).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .errors import UserFacingError, error_text

# Command groups, in help order. Each module has `register(subparsers) -> None`.
COMMAND_MODULES = (
    "threads",
    "importing",
    "schema",
    "run",
    "models",
    "local",
    "tools",
    "mcp",
    "skills",
    "render",
    "history",
    "matrix",
    "eval",
    "optimize",
    "plugins",
    "storage",
    "traces",
    "share",
)

if TYPE_CHECKING:
    from .app import App

Handler = Callable[[argparse.Namespace, "App"], int]  # what `set_defaults(handler=…)` stores


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
    app.plugin_autoload = True  # every command sees the plugins' code extensions as they are now
    app.keep_local_engine = True  # the built-in engine outlives a command (it stops when idle)
    logger = logging.getLogger("llmspace")
    before = list(logger.handlers)
    try:
        _log_path(app)  # library warnings (with tracebacks) go to the log file, not between streamed output
        return int(handler(args, app) or 0)
    except UserFacingError as exc:
        print(f"error: {error_text(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the one error boundary of the command line
        print(f"error: {error_text(exc, _log_path(app))}", file=sys.stderr)
        return 2
    finally:
        app.close()
        for added in [h for h in logger.handlers if h not in before]:  # in-process callers (tests) run main() many times
            logger.removeHandler(added)
            added.close()


def _log_path(app: App) -> Path | None:
    """The log file (attached to the `llmspace` logger); None when the logs folder cannot be made."""
    try:
        return app.log_file
    except (OSError, UserFacingError):
        return None

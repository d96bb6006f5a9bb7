"""Helpers shared by the command groups' `register(subparsers)` functions."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..app import App


def help_handler(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace, App], int]:
    """A handler for a command group called without its action: print the group's help, exit 0."""

    def show(args: argparse.Namespace, app: App) -> int:
        parser.print_help()
        return 0

    return show

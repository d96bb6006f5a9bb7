"""Asking the user to grant what a plugin asks for (its capabilities) on the command line:
`plugins install` and `plugins dev --install` both ask through `approver`."""

from __future__ import annotations

import sys
from collections.abc import Callable


def approver(yes: bool) -> Callable[[str, tuple[str, ...], bool], bool]:
    """Shows what a plugin asks for; grants it with --yes or a "y" on a terminal."""
    def approve(name: str, asked: tuple[str, ...], legacy: bool) -> bool:
        from ..plugins.package.capabilities import question

        print(question(name, asked, legacy))
        if yes:
            print("Granted (--yes).")
            return True
        if not sys.stdin.isatty():
            return False
        try:
            answer = input("Grant them? [y/N] ")
        except EOFError:
            return False
        return answer.strip().lower() in ("y", "yes")
    return approve

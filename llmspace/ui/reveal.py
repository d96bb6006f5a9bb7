"""Show a file or folder in the system file manager, copy text to the clipboard, and open a
link from a reply after asking.

    reveal_path(errors, path)     # the folder (or the file's folder) opens; an error names the path
    copy_text(widget, text)
    confirm_open(dialogs, url)    # "Open this link in your browser?" then the browser (http, https, mailto)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .dialogs import Dialogs
    from .services import ErrorReporter


def reveal_path(errors: ErrorReporter, path: Path) -> None:
    target = path if path.is_dir() else path.parent
    opener = "open" if sys.platform == "darwin" else ("explorer" if os.name == "nt" else "xdg-open")
    try:
        subprocess.Popen([opener, str(target)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        errors.show(f"No file manager found. The path is {path}.")


def copy_text(widget: Any, text: str) -> None:
    widget.clipboard_clear()
    widget.clipboard_append(text)


def confirm_open(dialogs: Dialogs, url: str) -> bool:
    """A link from text the user did not write (a model reply, a tool result): ask, showing
    the whole address, then open it in the browser. Only web and mail links open."""
    import webbrowser

    from ..presenters.markdown import link_target

    target = link_target(url)
    if target is None or not dialogs.confirm(f"Open this link in your browser?\n\n{target}", "Open link"):
        return False
    webbrowser.open(target)
    return True

"""Show a file or folder in the system file manager, and copy text to the clipboard.

    reveal_path(errors, path)     # the folder (or the file's folder) opens; an error names the path
    copy_text(widget, text)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

"""A model download's progress as the first-run sheet and Settings › Local models show it:
a progress bar's variable and a label, updated from the download's listener (through the
pump) until the download is cancelled or the widget is gone.

    show_progress(widget, bar_var, label, progress, cancel)   # "12.0 of 491.4 MB · 5.2 MB/s · 1 min left"
    show_note(widget, label, "Checking the SHA-256…", cancel)
"""

from __future__ import annotations

import threading
from typing import Any

from ..local.download import Progress
from ..presenters import first_run as fr


def show_progress(widget: Any, bar_var: Any, label: Any, p: Progress, cancel: threading.Event) -> None:
    """The bar at `p`'s fraction and the label with size, speed and time left."""
    if cancel.is_set() or not widget.winfo_exists():
        return
    bar_var.set(p.done / p.total if p.total else 0.0)
    label.configure(text=fr.progress_text(p))


def show_note(widget: Any, label: Any, text: str, cancel: threading.Event) -> None:
    """A line about the download's other steps (checking, installing)."""
    if not cancel.is_set() and widget.winfo_exists():
        label.configure(text=text)

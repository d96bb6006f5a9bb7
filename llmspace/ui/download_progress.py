"""A model download's progress as the first-run sheet and Settings › Local models show it:
a progress bar's variable and a label, updated from the download's sinks (through the pump)
until the download is cancelled or the widget is gone. What to show is
`presenters/local_models.py`'s.

    show_progress(widget, bar_var, label, progress, job)   # "12.0 of 491.4 MB · 5.2 MB/s · 1 min left"
    show_note(widget, label, "Checking the SHA-256…", job)
"""

from __future__ import annotations

from typing import Any

from ..presenters.local_models import Download, DownloadProgress


def show_progress(widget: Any, bar_var: Any, label: Any, p: DownloadProgress, job: Download) -> None:
    """The bar at `p`'s fraction and the label with size, speed and time left."""
    if job.cancelled or not widget.winfo_exists():
        return
    bar_var.set(p.fraction)
    label.configure(text=p.text)


def show_note(widget: Any, label: Any, text: str, job: Download) -> None:
    """A line about the download's other steps (checking, installing)."""
    if not job.cancelled and widget.winfo_exists():
        label.configure(text=text)

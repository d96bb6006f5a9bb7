"""What an optimization leaves: the held-out comparison (`eval compare`'s Markdown and HTML),
`summary.json`, and, when the candidate was promoted, the optimized thread beside the original
and a unified diff of the prompt.

    write_comparison(folder, comparison)
    path = write_optimized(thread_path, thread, note)   # <stem>.optimized.json, never overwriting
    write_diff(folder / "prompt.diff", before, after)

An existing `<stem>.optimized.json` is kept: the next free `<stem>.optimized-2.json`, `-3`, …
is written instead. Every file through `jsonio`'s atomic writers.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from ..core.model import Thread
from ..core.threadio import serialize_thread
from ..evals.compare import Comparison
from ..evals.compare_format import format_html, format_markdown
from ..jsonio import write_bytes_atomic, write_json_atomic


def write_comparison(folder: Path, comparison: Comparison) -> None:
    write_bytes_atomic(folder / "comparison.md", format_markdown(comparison).encode("utf-8"))
    write_bytes_atomic(folder / "comparison.html", format_html(comparison).encode("utf-8"))


def write_summary(folder: Path, summary: dict[str, Any]) -> None:
    write_json_atomic(folder / "summary.json", summary, trailing_newline=True)


def prompt_diff(before: str, after: str, name: str) -> str:
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 fromfile=f"{name} (original)", tofile=f"{name} (optimized)")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def write_diff(path: Path, before: str, after: str, name: str) -> None:
    write_bytes_atomic(path, prompt_diff(before, after, name).encode("utf-8"))


def optimized_path(thread_path: Path) -> Path:
    stem = thread_path.name[: -len(".json")] if thread_path.name.endswith(".json") else thread_path.stem
    path = thread_path.with_name(f"{stem}.optimized.json")
    n = 2
    while path.exists():
        path = thread_path.with_name(f"{stem}.optimized-{n}.json")
        n += 1
    return path


def write_optimized(thread_path: Path, thread: Thread, note: str) -> Path:
    """A copy of `thread` (already holding the new prompt) beside `thread_path`, titled with `note`."""
    copy = thread.model_copy(deep=True)
    copy.title = f"{copy.title or thread_path.stem} ({note})"
    path = optimized_path(thread_path)
    write_bytes_atomic(path, serialize_thread(copy))
    return path

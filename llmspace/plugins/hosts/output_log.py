"""Each plugin's `output.log` (`logs/plugins/<plugin>/output.log`): what its host processes
print on stderr and the tracebacks of its calls that raised.

    logs = OutputLogs(service.log.folder)
    write = logs.writer("atlas")       # one writer per plugin: hosts and tracebacks share its lock
    write("loaded 3 tools")            # a line; known secrets become ***, control characters go
    logs.path("atlas")                 # where `plugins info` points

A file past `OUTPUT_MAX_BYTES` is renamed to `output.log.1` (one generation kept) before the
next line is appended.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path

from ...redact import KNOWN

OUTPUT_MAX_BYTES = 1_000_000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class OutputLogs:
    """The output.log writers of every plugin; `folder(plugin)` is its log folder."""

    def __init__(self, folder: Callable[[str], Path]) -> None:
        self._folder = folder
        self._lock = threading.Lock()
        self._writers: dict[str, Callable[[str], None]] = {}

    def path(self, plugin: str) -> Path:
        return self._folder(plugin) / "output.log"

    def writer(self, plugin: str) -> Callable[[str], None]:
        """The writer of `output.log` of `plugin` (the same one every time)."""
        with self._lock:
            write = self._writers.get(plugin)
            if write is None:
                write = self._writers[plugin] = self._new_writer(plugin)
            return write

    def _new_writer(self, plugin: str) -> Callable[[str], None]:
        path = self.path(plugin)
        lock = threading.Lock()

        def write(text: str) -> None:
            clean = _CONTROL.sub("", KNOWN.text(text))
            with lock:
                path.parent.mkdir(parents=True, exist_ok=True)
                if path.exists() and path.stat().st_size > OUTPUT_MAX_BYTES:
                    path.replace(path.with_suffix(".log.1"))
                with open(path, "a", encoding="utf-8") as f:
                    f.write(clean if clean.endswith("\n") else clean + "\n")

        return write

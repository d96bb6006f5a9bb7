"""The journal of an evaluation run: `journal.jsonl` in its results folder.

One JSON object per line, appended by one writer thread. Each line is written whole, in
order, and fsynced before the writer takes the next record off its queue; lines that were
already queued together (a burst of fast cells) are written one after the other and share
one fsync (group commit: an fsync costs about 2 ms here, so one per line would cap a run at
a few hundred cells per second). A process crash loses nothing written; a crash of the
machine loses at most the last batch, and a torn last line is dropped on reading. Records: `{"type": "header", …}` first (the hashes of the evaluation
file, dataset, thread and settings), then `cell` and `judge` records keyed by `key`, and
`{"type": "end"}` when every cell has a result. This file is the one exception to "every
write goes through jsonio" (an append-only log cannot be replaced atomically per line).

`read_journal(path)` returns the records and whether a torn last line (a crash mid-write)
was dropped; a bad line elsewhere is an error naming its line. `JournalWriter.open` drops a
torn tail before appending, so new lines never follow half a line.
"""

from __future__ import annotations

import json
import os
import queue
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserFacingError

NAME = "journal.jsonl"
VERSION = 1


@dataclass
class JournalRead:
    records: list[dict[str, Any]]
    torn: bool  # a torn last line was dropped

    @property
    def header(self) -> dict[str, Any] | None:
        first = self.records[0] if self.records else None
        return first if first is not None and first.get("type") == "header" else None

    @property
    def finished(self) -> bool:
        return any(r.get("type") == "end" for r in self.records)


def read_journal(path: Path) -> JournalRead:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return JournalRead([], False)
    except OSError as exc:
        raise UserFacingError(f"Could not read the journal {path}: {exc.strerror or exc}.") from None
    lines = data.split(b"\n")
    tail = lines.pop() if lines else b""  # the part after the last newline: empty, or a torn line
    records: list[dict[str, Any]] = []
    torn = bool(tail.strip())
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            raise UserFacingError(f"{path} line {n} is not JSON; the journal is damaged.",
                                  hint="Start over with `llmspace eval run FILE --fresh`.") from None
        if isinstance(value, dict):
            records.append(value)
    return JournalRead(records, torn)


def _truncate_torn_tail(path: Path) -> bool:
    """Cut a torn last line off the file; True when something was cut."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return False
    if not data or data.endswith(b"\n"):
        return False
    keep = data.rfind(b"\n") + 1
    with open(path, "r+b") as f:
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
    return True


class JournalWriter:
    """Appends records from any thread; one writer thread does the I/O (write, flush, fsync)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._error: BaseException | None = None
        self._file = open(path, "ab")  # noqa: SIM115 - owned by the writer thread, closed in close()
        self._thread = threading.Thread(target=self._run, name="eval-journal", daemon=True)
        self._thread.start()

    @classmethod
    def open(cls, path: Path) -> tuple[JournalWriter, bool]:
        torn = _truncate_torn_tail(path)
        return cls(path), torn

    def append(self, record: dict[str, Any]) -> None:
        if self._error is not None:
            raise UserFacingError(f"Could not write the journal {self.path}: {self._error}.")
        self._queue.put(record)

    def _run(self) -> None:
        f = self._file
        stop = False
        while not stop:
            batch = [self._queue.get()]
            while True:  # whatever else is queued now shares this fsync
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if self._error is not None:
                stop = None in batch
                continue
            try:
                for record in batch:
                    if record is None:
                        stop = True
                        break
                    f.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")
                f.flush()
                os.fsync(f.fileno())
            except OSError as exc:
                self._error = exc

    def close(self) -> None:
        """Write what is queued, then stop the thread and close the file."""
        self._queue.put(None)
        self._thread.join()
        self._file.close()
        if self._error is not None:
            raise UserFacingError(f"Could not write the journal {self.path}: {self._error}.")

"""The journal of an evaluation run: `journal.jsonl` in its results folder.

One JSON object per line, appended by one writer thread. Each line is written whole, in
order, and fsynced before the writer takes the next record off its queue; lines that were
already queued together (a burst of fast cells) are written one after the other and share
one fsync (group commit: an fsync costs about 2 ms here, so one per line would cap a run at
a few hundred cells per second). A process crash loses nothing written; a crash of the
machine loses at most the last batch, and a torn last line is dropped on reading. Records (typed in `evals/records.py`): `{"type": "header", …}` first (the hashes of the evaluation
file, dataset, thread and settings), then `cell` and `judge` records keyed by `key`, and
`{"type": "end"}` when every cell has a result (`read_optimize_journal` reads the journal of
`llmspace optimize`, whose records are its reflector answers and candidates). This file is the one exception to "every
write goes through jsonio" (an append-only log cannot be replaced atomically per line).

`read_journal(path)` returns the records and whether a torn last line (a crash mid-write)
was dropped; a bad line elsewhere is an error naming its line. `JournalWriter.open` drops a
torn tail before appending, so new lines never follow half a line.

`RunLock.take(folder)`: the run that writes a results folder holds an exclusive `flock` on
its `run.lock` from choosing the folder to writing the results, so a second `eval run` on the
same folder is refused ("a run is in progress") instead of resuming it too and paying for
every missing cell twice; `choosing(base)` serialises choosing a folder among an evaluation's
results (`evals/.<name>.lock`, beside its folder; so two runs started at once do not both
start a new one). A lock dies with its
process. Windows has no `flock`: no lock there.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..errors import UserFacingError
from ..jsonio import UnreadableFileError, open_regular_file
from .records import End, Header, JournalRecord, OptimizeRecord, parse_optimize_record, parse_record, record_data

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

NAME = "journal.jsonl"
LOCK = "run.lock"
VERSION = 1


def _lock_file(path: Path) -> IO[bytes]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    return os.fdopen(fd, "r+b")


class RunLock:
    """The exclusive lock of a results folder, held by the one run that writes it."""

    def __init__(self, folder: Path, file: IO[bytes]) -> None:
        self.folder = folder
        self._file: IO[bytes] | None = file

    @classmethod
    def take(cls, folder: Path) -> RunLock:
        """The lock of `folder`, or a UserFacingError when another run holds it."""
        try:
            f = _lock_file(folder / LOCK)
        except OSError as exc:
            raise UserFacingError(f"Could not lock the results folder {folder}: {exc.strerror or exc}.") from None
        if fcntl is not None:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                f.close()
                raise UserFacingError(f"A run of this evaluation is in progress in {folder}; this one did nothing.",
                                      hint="Wait for it to finish (it writes the results there), or pass --fresh "
                                           "to start a new results folder.") from None
        return cls(folder, f)

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing the file drops the flock
            self._file = None


@contextlib.contextmanager
def choosing(base: Path) -> Iterator[None]:
    """Hold the lock on choosing a results folder under `base` (waits for another run's choice: milliseconds)."""
    f = _lock_file(base.parent / f".{base.name}.lock")
    try:
        if fcntl is not None:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        f.close()


@dataclass
class JournalRead:
    records: list[JournalRecord]  # parsed by `records.parse_record`; kinds this version does not know are left out
    torn: bool  # a torn last line was dropped

    @property
    def header(self) -> Header | None:
        first = self.records[0] if self.records else None
        return first if isinstance(first, Header) else None

    @property
    def finished(self) -> bool:
        return any(isinstance(r, End) for r in self.records)


def _journal_bytes(path: Path) -> bytes | None:
    """The journal's bytes, or None when there is none; a named pipe, device or socket in its
    place is refused, never waited on."""
    try:
        with open_regular_file(path) as f:
            return f.read()
    except UnreadableFileError as exc:
        if exc.missing:
            return None
        raise
    except OSError as exc:
        raise UserFacingError(f"Could not read the journal {path}: {exc.strerror or exc}.") from None


def read_journal(path: Path) -> JournalRead:
    lines, torn = _lines(path)
    return JournalRead([r for v in _values(path, lines) if (r := parse_record(v)) is not None], torn)


def read_optimize_journal(path: Path) -> list[OptimizeRecord]:
    """The records of an optimization's journal (`llmspace optimize`), a torn last line dropped."""
    lines, _torn = _lines(path)
    return [r for v in _values(path, lines) if (r := parse_optimize_record(v)) is not None]


def _lines(path: Path) -> tuple[list[bytes], bool]:
    """A journal's whole lines, and whether a torn last line was dropped."""
    data = _journal_bytes(path)
    if data is None:
        return [], False
    lines = data.split(b"\n")
    tail = lines.pop() if lines else b""  # the part after the last newline: empty, or a torn line
    return lines, bool(tail.strip())


def _values(path: Path, lines: list[bytes]) -> Iterator[dict[str, Any]]:
    """The JSON object of each line, one at a time; a bad line is an error naming it."""
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            raise UserFacingError(f"{path} line {n} is not JSON; the journal is damaged.",
                                  hint="Start over with `llmspace eval run FILE --fresh`.") from None
        if isinstance(value, dict):
            yield value


def _truncate_torn_tail(path: Path) -> bool:
    """Cut a torn last line off the file; True when something was cut."""
    data = _journal_bytes(path)
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
        self._queue: queue.Queue[JournalRecord | OptimizeRecord | None] = queue.Queue()
        self._error: BaseException | None = None
        self._file = open(path, "ab")  # noqa: SIM115 - owned by the writer thread, closed in close()
        self._thread = threading.Thread(target=self._run, name="eval-journal", daemon=True)
        self._thread.start()

    @classmethod
    def open(cls, path: Path) -> tuple[JournalWriter, bool]:
        torn = _truncate_torn_tail(path)
        return cls(path), torn

    def append(self, record: JournalRecord | OptimizeRecord) -> None:
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
                    f.write(json.dumps(record_data(record), ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")
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

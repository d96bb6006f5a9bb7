"""A plugin host's stderr, read for the app: each line goes to the plugin's output (its
output.log), cut at `LINE_CAP`, at most `RATE` bytes a second kept, and what is dropped
noted as `[N bytes dropped]`; the last `TAIL_CHARS` are kept for crash reports.

    reader = StderrReader("atlas (python)", on_output=write_line, ended=stopped)
    threading.Thread(target=reader.read, args=(proc.stderr,)).start()
    reader.tail()        # the last 64 KiB, for a crash report

It reads the raw descriptor with a short `select`, so a child process that keeps the pipe
open never holds up the end of the host: the reader ends when `ended` is set.
"""

from __future__ import annotations

import logging
import os
import select
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import IO

log = logging.getLogger("llmspace.plugins")

TAIL_CHARS = 64 * 1024
LINE_CAP = 64 * 1024  # the longest stderr line kept; the rest of it is dropped
RATE = 64 * 1024  # stderr bytes a second kept per host (a burst of one second's worth)


class StderrReader:
    def __init__(self, label: str, on_output: Callable[[str], None] | None, *, ended: threading.Event,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.on_output, self._ended, self.clock = label, on_output, ended, clock
        self.dropped = 0  # bytes dropped (over a line's cap or the rate) not yet noted
        self._lock = threading.Lock()
        self._tail: deque[str] = deque()
        self._tail_chars = 0

    def tail(self) -> str:
        """The last stderr lines of the host (for crash reports)."""
        with self._lock:
            return "".join(self._tail)

    def read(self, stream: IO[bytes] | None) -> None:
        """Hand stderr to `on_output` line by line: a line is cut at `LINE_CAP`, at most `RATE`
        bytes a second are kept, and what is dropped is logged as `[N bytes dropped]`. Reads
        the raw descriptor with a short `select`, so a child that keeps the pipe open never
        holds up the end of the host (it ends when `ended` is set)."""
        assert stream is not None
        fd = stream.fileno()
        line = bytearray()
        cut = False  # the current line passed LINE_CAP: the rest of it is dropped
        allowance, last = float(RATE), self.clock()
        try:
            while True:
                ready, _, _ = select.select([fd], [], [], 0.2)
                if not ready:
                    if self._ended.is_set():
                        break
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                now = self.clock()
                allowance = min(float(RATE), allowance + (now - last) * RATE)
                last = now
                for piece in chunk.splitlines(keepends=True):
                    ends = piece.endswith((b"\n", b"\r"))
                    room = LINE_CAP - len(line)
                    if cut:
                        self.dropped += len(piece)
                    elif len(piece) > room:
                        line += piece[:room]
                        self.dropped += len(piece) - room
                        cut = True
                    else:
                        line += piece
                    if ends or (cut and line):
                        if line:
                            if len(line) <= allowance:
                                allowance -= len(line)
                                self._emit(bytes(line) if line.endswith((b"\n", b"\r")) else bytes(line) + b"\n")
                            else:
                                self.dropped += len(line)
                            line.clear()
                        if ends:
                            cut = False
            if line:
                self._emit(bytes(line))
        except (OSError, ValueError):
            pass
        finally:
            self._note_dropped()
            close_quietly(stream)

    def _emit(self, raw: bytes) -> None:
        self._note_dropped()
        self._record(raw.decode("utf-8", "replace"))

    def _note_dropped(self) -> None:
        if self.dropped:
            dropped, self.dropped = self.dropped, 0
            self._record(f"[{dropped} bytes dropped]\n")

    def _record(self, text: str) -> None:
        with self._lock:
            self._tail.append(text)
            self._tail_chars += len(text)
            while self._tail_chars > TAIL_CHARS and len(self._tail) > 1:
                self._tail_chars -= len(self._tail.popleft())
        if self.on_output is not None:
            try:
                self.on_output(text)
            except Exception:
                log.exception("could not record the output of %s", self.label)


def close_quietly(stream: IO[bytes] | None) -> None:
    """Close a child's pipe, if any, ignoring that it is already closed or broken."""
    if stream is None:
        return
    try:
        stream.close()
    except (OSError, ValueError):
        pass

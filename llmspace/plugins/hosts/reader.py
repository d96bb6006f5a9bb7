"""Reading a plugin host's output: the thread that waits for an answer reads it (leader/followers).

    reader = LineReader(fd, handle=conn_dispatch, on_end=conn_fail_all, name="atlas (python)")
    reader.start()                                            # the background thread
    why = reader.wait(pending.done_event.is_set, 30, cancel)  # "" | "cancelled" | "timeout"

A thread waiting for an answer reads the pipe itself when no other thread does (it leads):
its answer reaches it with no hand-off between threads, which cost about as much as the pipe
itself. Every line it reads goes to `handle` (an answer settles its request, whoever waits
for it; a host request is handed to the callback pool); waiters whose answer came in are
woken. Once its own answer is in, the leader handles the complete lines already read and
passes the reading on: a waiting thread takes it. With no call waiting for `IDLE_DELAY`
seconds, the background thread reads (late host requests, the end of the output); a call
that then comes takes the reading back (it wakes the background thread through a pipe).
Cancel and timeout wake a leader as they wake a waiter. At the end of the output (or a
line that breaks the protocol) `on_end(problem)` runs once, on the thread that read it.

Leading needs `select.poll` (POSIX); elsewhere the background thread reads all the time and
hands every answer over.
"""

from __future__ import annotations

import os
import select
import threading
import time
from collections.abc import Callable
from typing import Protocol

IDLE_DELAY = 0.05  # after the last call, how long before the background thread reads
CHUNK = 256 * 1024
CAN_LEAD = hasattr(select, "poll")
_BACKGROUND = "background"
_POLL_IN = select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR | select.POLLNVAL if CAN_LEAD else 0


class Cancel(Protocol):
    """What `wait` needs of a cancel token (llmspace/cancel.py)."""

    @property
    def cancelled(self) -> bool: ...

    def on_cancel(self, callback: Callable[[], object]) -> None: ...


class LineReader:
    """The lines of one pipe, read by whichever thread needs them next."""

    def __init__(self, fd: int, *, handle: Callable[[bytes], str], on_end: Callable[[str], None], name: str,
                 max_line: int) -> None:
        self._fd, self._handle, self._on_end, self.name, self._max_line = fd, handle, on_end, name, max_line
        self._turn = threading.Condition(threading.Lock())  # guards the roles; the background thread waits on it
        self._leader: object | None = None  # who reads: a waiting call's token, _BACKGROUND, or nobody
        self._waiting = 0  # threads inside `wait`
        self._sleepers: dict[object, tuple[Callable[[], bool], threading.Event]] = {}  # waiting calls not reading
        self._handover = False  # a waiting call asked the background thread for the reading
        self._closing = False  # the host is being stopped: the background thread reads at once
        self._over = False
        self.done = threading.Event()  # the output ended and `on_end` ran
        self._released = time.monotonic()
        self._buf = bytearray()
        self._scanned = 0  # how much of _buf holds no newline
        self._poller: select.poll | None = None
        self._wake_r = self._wake_w = -1
        if CAN_LEAD:
            self._wake_r, self._wake_w = os.pipe()
            os.set_blocking(self._wake_r, False)
            os.set_blocking(self._wake_w, False)
            self._poller = select.poll()
            self._poller.register(fd, _POLL_IN)
            self._poller.register(self._wake_r, select.POLLIN)

    def start(self) -> None:
        threading.Thread(target=self._background, name=f"plugin-host-out {self.name}", daemon=True).start()

    # -- waiting ---------------------------------------------------------------------------
    def wait(self, finished: Callable[[], bool], timeout: float | None, cancel: Cancel | None = None,
             clock: Callable[[], float] = time.monotonic) -> str:
        """Until `finished()`, the cancel or the timeout, whichever comes first: "" (finished),
        "cancelled" or "timeout". Reads the pipe meanwhile when no other thread does."""
        if finished():
            return ""
        deadline = None if timeout is None else clock() + timeout
        if cancel is not None:
            cancel.on_cancel(self._interrupt)
        me = object()
        wake: threading.Event | None = None  # made when this thread first has to sleep
        with self._turn:
            self._waiting += 1
        try:
            while True:
                if finished():
                    return ""
                if cancel is not None and cancel.cancelled:
                    return "cancelled"
                left = None if deadline is None else deadline - clock()
                if left is not None and left <= 0:
                    return "timeout"
                with self._turn:
                    if finished() or self.done.is_set():
                        return ""
                    leading = self._leader is None and not self._over and CAN_LEAD
                    if leading:
                        self._leader = me
                    else:
                        if self._leader is _BACKGROUND and CAN_LEAD and not (self._handover or self._closing):
                            self._handover = True
                            self._poke()
                        wake = wake or threading.Event()
                        wake.clear()
                        self._sleepers[me] = (finished, wake)
                if not leading:
                    assert wake is not None
                    wake.wait(left)
                    continue
                try:
                    self._lead(finished, cancel, deadline, clock)
                finally:
                    self._release(me)
        finally:
            with self._turn:
                self._waiting -= 1
                self._sleepers.pop(me, None)
                self._elect()

    def close(self) -> None:
        """Once the output ended: the wake pipe's descriptors are closed."""
        if self._wake_r >= 0 and self.done.is_set():
            for fd in (self._wake_r, self._wake_w):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._wake_r = self._wake_w = -1

    def read_to_end(self) -> None:
        """The host is being stopped: read what is left without waiting for a call."""
        with self._turn:
            self._closing = True
            self._turn.notify_all()

    # -- leading ---------------------------------------------------------------------------
    def _lead(self, finished: Callable[[], bool], cancel: Cancel | None, deadline: float | None,
              clock: Callable[[], float]) -> None:
        while not finished():
            if cancel is not None and cancel.cancelled:
                return
            left = None if deadline is None else deadline - clock()
            if left is not None and left <= 0:
                return
            if not self._read(left):
                return
        self._take_lines(self._complete())  # lines already read go on before the reading is passed on

    def _release(self, me: object) -> None:
        with self._turn:
            if self._leader is me:
                self._leader = None
                self._released = time.monotonic()
                self._elect()
            if self._closing:
                self._turn.notify_all()

    def _elect(self) -> None:
        """With nobody reading: wake one sleeping call to read (under `_turn`)."""
        if self._leader is None and not self._over:
            for done, wake in self._sleepers.values():
                if not done():
                    wake.set()
                    return

    def _wake_finished(self) -> None:
        """Wake the sleeping calls whose answer is in."""
        with self._turn:
            for done, wake in self._sleepers.values():
                if done():
                    wake.set()

    def _background(self) -> None:
        turn = self._turn
        while True:
            with turn:
                while True:
                    if self._over:
                        return
                    idle = self._waiting == 0 and time.monotonic() - self._released >= IDLE_DELAY
                    if self._leader is None and (idle or self._closing or not CAN_LEAD):
                        self._leader, self._handover = _BACKGROUND, False
                        break
                    turn.wait(IDLE_DELAY)
            try:
                while self._read(None):
                    with turn:  # a call takes the reading over, unless the host is being stopped
                        if not self._closing and (self._handover or (self._waiting and CAN_LEAD)):
                            break
            finally:
                self._release(_BACKGROUND)

    def _read(self, timeout: float | None) -> bool:
        """Read what comes within `timeout` (None: until something does) and handle its
        complete lines; False once the output ended."""
        if self._over:
            return False
        lines = self._complete()
        if not lines:
            got = self._fill(timeout)
            if isinstance(got, str):
                self._end(got)
                return False
            lines = self._complete()
            if not lines and len(self._buf) > self._max_line:
                self._end("sent a message longer than 64 MiB")
                return False
        return self._take_lines(lines)

    def _take_lines(self, lines: list[bytes]) -> bool:
        if not lines:
            return not self._over
        for line in lines:
            if len(line) > self._max_line:
                self._end("sent a message longer than 64 MiB")
                return False
            if not line.strip():
                continue
            try:
                problem = self._handle(line)
            except Exception as exc:  # e.g. nesting too deep for the JSON reader
                problem = f"sent a message this app could not read ({type(exc).__name__})"
            if problem:
                self._end(problem)
                return False
        self._wake_finished()  # answers of other waiting calls may be in
        return True

    def _fill(self, timeout: float | None) -> str | None:
        """Read one chunk (when one comes within `timeout`); "" at the end of the output."""
        if self._poller is not None:
            ms = -1 if timeout is None else max(1, int(timeout * 1000) + 1)
            ready = False
            for fd, _events in self._poller.poll(ms):
                if fd == self._wake_r:
                    self._drain_wakes()
                else:
                    ready = True
            if not ready:
                return None
        try:
            chunk = os.read(self._fd, CHUNK)
        except BlockingIOError:
            return None
        except OSError:
            return ""
        if not chunk:
            return ""
        self._buf += chunk
        return None

    def _complete(self) -> list[bytes]:
        """The complete lines in the buffer (taken out of it)."""
        buf = self._buf
        end = buf.rfind(b"\n", self._scanned)
        if end < 0:
            self._scanned = len(buf)
            return []
        data = bytes(buf[:end])
        del buf[:end + 1]
        self._scanned = 0
        return data.split(b"\n")

    def _end(self, problem: str) -> None:
        with self._turn:
            if self._over:
                return
            self._over = True
        try:
            self._on_end(problem)
        finally:
            self.done.set()
            with self._turn:
                for _done, wake in self._sleepers.values():
                    wake.set()
                self._turn.notify_all()

    # -- waking ----------------------------------------------------------------------------
    def _interrupt(self) -> None:
        """A cancel: wake the sleeping calls and the thread in `poll`."""
        with self._turn:
            for _done, wake in self._sleepers.values():
                wake.set()
        self._poke()

    def _poke(self) -> None:
        if self._wake_w >= 0:
            try:
                os.write(self._wake_w, b"\0")
            except OSError:  # full (a wake is pending anyway) or closed
                pass

    def _drain_wakes(self) -> None:
        try:
            while os.read(self._wake_r, 4096):
                pass
        except OSError:
            pass

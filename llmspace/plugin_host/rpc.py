"""The host's end of the NDJSON JSON-RPC connection (`docs/plugin-protocol.md`, Framing).

`Connection.serve` reads app messages from the protocol's stdin and hands requests and
notifications to a dispatcher; answers to the host's own requests resolve the waiting
`request` call. Every outgoing message is one line, written whole under a lock to the
private duplicate of the original stdout that `plugin_host.main` made. Host requests get
the ids "h1", "h2", ….

Reading moves between threads (leader/followers): one thread reads at a time; when the
dispatcher `defer`s a call, the reading thread hands the reading to an idle follower (or a
new thread) and runs the call itself, then waits to read again. A call so starts on the
thread that read it, with no hand-off to a worker in its way (the round trip's largest cost
before). The main thread only waits for the end (end of input, or `dispatch` returning False);
plugin code never runs on it.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

from ..plugin_protocol import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR

__all__ = ["INTERNAL_ERROR", "INVALID_PARAMS", "INVALID_REQUEST", "METHOD_NOT_FOUND", "PARSE_ERROR", "Connection",
           "RpcError", "TooLarge", "encode"]
MAX_LINE = 64 * 1024 * 1024
CALLBACK_TIMEOUT = 900.0
"""The longest a context call waits for the app (a file picker waits for a person; the
app's own command timeout, 600 s, ends the call before this)."""


class RpcError(Exception):
    """An error answer from the app (or a request that got none: `code` is None)."""

    def __init__(self, code: int | None, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class TooLarge(ValueError):
    """A message longer than the protocol's 64 MiB line limit."""


class _Pending:
    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: RpcError | None = None


_UTF8 = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ASCII = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def encode(message: dict[str, Any]) -> bytes:
    """One message → one UTF-8 line (lone surrogates from plugin strings become escapes)."""
    text = _UTF8.encode(message)
    try:
        line = text.encode("utf-8")
    except UnicodeEncodeError:
        line = _ASCII.encode(message).encode("ascii")
    if len(line) >= MAX_LINE:
        raise TooLarge(f"the message is {len(line) // (1024 * 1024)} MiB; the protocol carries at most 64 MiB a line")
    return line + b"\n"


class Connection:
    """One app connection: `serve` on the main thread, `send`/`request` from any thread."""

    def __init__(self, reader: BinaryIO, out_fd: int) -> None:
        self._reader = reader
        self._out_fd = out_fd
        self._write_lock = threading.Lock()
        self._pending_lock = threading.Lock()
        self._pending: dict[str, _Pending] = {}
        self._next_id = 0
        self._dispatch: Callable[[dict[str, Any]], bool] = lambda _message: True
        self._deferred: tuple[Callable[..., Any], tuple[Any, ...]] | None = None  # set by the reading thread only
        self._ended = threading.Event()
        self._followers = _Followers(self._lead)

    def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line; raises `TooLarge` or the JSON error before writing anything."""
        view = memoryview(encode({"jsonrpc": "2.0", **message}))
        with self._write_lock:
            while view:
                written = os.write(self._out_fd, view)
                view = view[written:]

    def respond(self, request_id: Any, result: Any) -> None:
        self.send({"id": request_id, "result": result})

    def respond_error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.send({"id": request_id, "error": error})

    def request(self, method: str, params: dict[str, Any], timeout: float = CALLBACK_TIMEOUT) -> Any:
        """Call the app and block until it answers; raises `RpcError` for an error answer or none."""
        pending = _Pending()
        with self._pending_lock:
            self._next_id += 1
            request_id = f"h{self._next_id}"
            self._pending[request_id] = pending
        try:
            self.send({"id": request_id, "method": method, "params": params})
            if not pending.done.wait(timeout):
                raise RpcError(None, f"the app did not answer {method} within {timeout:g} s")
        finally:
            with self._pending_lock:
                self._pending.pop(request_id, None)
        if pending.error is not None:
            raise pending.error
        return pending.result

    def serve(self, dispatch: Callable[[dict[str, Any]], bool]) -> None:
        """Read app messages until end of input or until `dispatch` returns False (the reading
        runs on other threads; this one waits for the end)."""
        self._dispatch = dispatch
        self._followers.promote()
        self._ended.wait()

    def defer(self, fn: Callable[..., Any], *args: Any) -> None:
        """From `dispatch`: run `fn(*args)` on the reading thread once another thread reads."""
        self._deferred = (fn, args)

    def _lead(self) -> None:
        """Read and dispatch until a dispatch defers a call (then hand the reading on and run
        it) or the input ends."""
        try:
            while not self._ended.is_set():
                message = self._next()
                if message is None:
                    self._ended.set()
                    return
                if "method" not in message:
                    self._resolve(message)
                    continue
                if not self._dispatch(message):
                    self._ended.set()
                    return
                if self._deferred is not None:
                    (fn, args), self._deferred = self._deferred, None
                    self._followers.promote()
                    fn(*args)
                    return
        except BaseException:
            self._ended.set()
            raise

    def _next(self) -> dict[str, Any] | None:
        """The next well-formed message (a request, a notification or an answer), or None at the end."""
        while True:
            line = self._reader.readline(MAX_LINE + 1)
            if not line:
                return None
            if len(line) > MAX_LINE:
                _log("a line longer than 64 MiB arrived; the protocol ends here")
                return None
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except (ValueError, RecursionError) as exc:
                self._safe_error(None, PARSE_ERROR, f"not JSON: {exc}")
                continue
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                self._safe_error(message.get("id") if isinstance(message, dict) else None, INVALID_REQUEST, "not a JSON-RPC 2.0 message (batches are not supported)")
                continue
            if "method" in message or ("id" in message and ("result" in message or "error" in message)):
                return message
            self._safe_error(message.get("id"), INVALID_REQUEST, "neither a request nor a response")

    def _resolve(self, message: dict[str, Any]) -> None:
        with self._pending_lock:
            pending = self._pending.get(message["id"]) if isinstance(message["id"], str) else None
        if pending is None:
            _log(f"an answer to an unknown request arrived (id {message['id']!r})")
            return
        error = message.get("error")
        if error is not None:
            if isinstance(error, dict):
                pending.error = RpcError(error.get("code"), str(error.get("message", "refused")), error.get("data"))
            else:
                pending.error = RpcError(INTERNAL_ERROR, "the app answered with a malformed error")
        else:
            pending.result = message.get("result")
        pending.done.set()

    def _safe_error(self, request_id: Any, code: int, message: str) -> None:
        try:
            self.respond_error(request_id if isinstance(request_id, str | int) else None, code, message)
        except OSError:
            pass


class _Followers:
    """Idle threads waiting to read (`promote` wakes one, or starts one when none waits);
    one idle for `IDLE_EXIT` s ends."""

    IDLE_EXIT = 60.0

    def __init__(self, lead: Callable[[], None]) -> None:
        self._lead = lead
        self._turns: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._started = 0

    def promote(self) -> None:
        with self._lock:
            start = self._idle == 0
            if start:
                self._started += 1
            else:
                self._idle -= 1
        if start:
            threading.Thread(target=self._run, name=f"plugin-host-{self._started}", daemon=True).start()
        else:
            self._turns.put(None)

    def _run(self) -> None:
        while True:
            self._lead()
            with self._lock:
                self._idle += 1
            while True:
                try:
                    self._turns.get(timeout=self.IDLE_EXIT)
                    break
                except queue.Empty:
                    with self._lock:
                        if self._idle > 0:  # no turn was promised to this thread
                            self._idle -= 1
                            return


def _log(text: str) -> None:
    print(f"llmspace plugin host: {text}", file=sys.stderr, flush=True)

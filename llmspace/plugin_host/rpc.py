"""The host's end of the NDJSON JSON-RPC connection (`docs/plugin-protocol.md`, Framing).

`Connection.serve` reads app messages from the protocol's stdin on the main thread and
hands requests and notifications to a dispatcher; answers to the host's own requests
resolve the waiting `request` call. Every outgoing message is one line, written whole under
a lock to the private duplicate of the original stdout that `plugin_host.main` made. Host
requests get the ids "h1", "h2", ….
"""

from __future__ import annotations

import json
import os
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


def encode(message: dict[str, Any]) -> bytes:
    """One message → one UTF-8 line (lone surrogates from plugin strings become escapes)."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        line = text.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(message, separators=(",", ":"), allow_nan=False).encode("ascii")
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
        """Read app messages until end of input or until `dispatch` returns False."""
        while True:
            line = self._reader.readline(MAX_LINE + 1)
            if not line:
                return
            if len(line) > MAX_LINE:
                _log("a line longer than 64 MiB arrived; the protocol ends here")
                return
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
            if "method" in message:
                if not dispatch(message):
                    return
            elif "id" in message and ("result" in message or "error" in message):
                self._resolve(message)
            else:
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


def _log(text: str) -> None:
    print(f"llmspace plugin host: {text}", file=sys.stderr, flush=True)

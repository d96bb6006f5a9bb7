"""Running loaded extensions: `execute`, `cancel` and `shutdown` (`docs/plugin-protocol.md`).

`Calls.execute` checks the request, builds the call's context and signal, and runs the
extension's method on the thread that read the request, once another thread has taken over
the reading (`Connection.defer`; an `async def` method, or any awaitable it
returns, runs with `asyncio.run` on that thread; its task is cancelled when the signal
fires). The answer is `{"type": "value"}` for plain JSON, `{"type": "result"}` for what
`create_result` made, or an error: -32000 the plugin raised, -32001 the call ended after
its signal fired, -32002 no such extension or method, -32003 the value is not JSON.
`Calls.shutdown` refuses new calls and disposes every instance, each bounded to 3 s.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..plugin_api import PluginResult
from ..plugin_protocol import (
    CANCELLED,
    COMMAND,
    DEFAULT_CANCEL_REASON,
    INVALID_PARAMS,
    KINDS,
    NOT_JSON,
    RAISED,
    TOOL,
    UNAVAILABLE,
)
from ..plugin_protocol import EXTENSION_METHODS as METHODS
from .context import CommandCallContext, StorageCallContext, ToolCallContext, caller
from .loading import Extension
from .plainjson import NotJSON, to_json
from .rpc import Connection, TooLarge
from .signals import CallSignal

DISPOSE_TIMEOUT = 3.0
_HOST_DIRS = (os.path.dirname(os.path.abspath(__file__)),)


class BadParams(ValueError):
    """An `execute` whose params do not follow the protocol (-32602)."""


class Calls:
    """The running calls of one host and the loaded extensions they run."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self._running: dict[str, CallSignal] = {}
        self._extensions: dict[tuple[str, str], Extension] | None = None
        self._all: list[Extension] = []
        self._closing = False
        self._second_arg: dict[str, bool] = {}

    def set_extensions(self, extensions: list[Extension]) -> None:
        self._extensions = {(e.kind, e.id): e for e in extensions if e.error is None}
        self._all = extensions

    def execute(self, request_id: Any, params: dict[str, Any]) -> None:
        try:
            call_id, target, args, signal = self._prepare(params)
        except BadParams as exc:
            self._conn.respond_error(request_id, INVALID_PARAMS, str(exc))
            return
        except LookupError as exc:
            reason = str(exc.args[0])
            self._conn.respond_error(request_id, UNAVAILABLE, reason, {"reason": reason})
            return
        with self._lock:
            if self._closing:
                reason = "the plugin host is shutting down"
                self._conn.respond_error(request_id, UNAVAILABLE, reason, {"reason": reason})
                return
            if call_id in self._running:
                self._conn.respond_error(request_id, INVALID_PARAMS, f"the call {call_id} is already running")
                return
            self._running[call_id] = signal
        self._conn.defer(self._run, request_id, call_id, target, args, signal)

    def cancel(self, params: dict[str, Any]) -> None:
        call_id, reason = params.get("callId"), params.get("reason")
        if not isinstance(call_id, str):
            return
        with self._lock:
            signal = self._running.get(call_id)
        if signal is not None:
            signal.fire(reason if isinstance(reason, str) and reason else DEFAULT_CANCEL_REASON)

    def _prepare(self, params: dict[str, Any]) -> tuple[str, Callable[..., Any], tuple[Any, ...], CallSignal]:
        call_id, kind, ext_id, method = (params.get(k) for k in ("callId", "kind", "id", "method"))
        data, context = params.get("input", {}), params.get("context", {})
        if not isinstance(call_id, str) or not call_id:
            raise BadParams("callId must be a non-empty string")
        if kind not in KINDS or not isinstance(ext_id, str) or not isinstance(method, str):
            raise BadParams(f"kind must be one of {', '.join(KINDS)}, with id and method strings")
        if not isinstance(data, dict) or not isinstance(context, dict):
            raise BadParams("input and context must be objects")
        if self._extensions is None:
            raise LookupError("the plugin host is not initialized")
        ext = self._extensions.get((kind, ext_id))
        if ext is None:
            raise LookupError(f"no active {kind} {ext_id!r} in this plugin")
        if method not in METHODS[kind] or method not in ext.methods:
            raise LookupError(f"the {kind} {ext_id!r} has no method {method!r}")
        target = ext.methods[method]
        signal = CallSignal()
        call = caller(self._conn, call_id)
        if kind == TOOL:
            arguments = data.get("arguments", {})
            if not isinstance(arguments, dict):
                raise BadParams("input.arguments of a tool must be an object")
            return call_id, target, (ToolCallContext(call, signal, context), arguments), signal
        if kind == COMMAND:
            words = data.get("arguments", [])
            if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
                raise BadParams("input.arguments of a command must be a list of strings")
            ctx = CommandCallContext(call, signal, context, tuple(words))
            args = (ctx, ctx.arguments) if self._takes_arguments(ext.key, target) else (ctx,)
            return call_id, target, args, signal
        ctx_s = StorageCallContext(call, signal, context)
        if method == "resolveLatest":
            if not isinstance(data.get("id"), str):
                raise BadParams("input.id must be a string")
            return call_id, target, (data["id"], ctx_s), signal
        if method == "read":
            if not isinstance(data.get("locator"), dict):
                raise BadParams("input.locator must be an object")
            return call_id, target, (data["locator"], ctx_s), signal
        if method == "list":
            options = {k: data.get(k) for k in ("cursor", "query")}
            if not all(v is None or isinstance(v, str) for v in options.values()):
                raise BadParams("input.cursor and input.query must be strings when given")
            return call_id, target, (ctx_s, options), signal
        thread, target_id = data.get("thread"), data.get("id")
        if not isinstance(thread, dict) or not (target_id is None or isinstance(target_id, str)):
            raise BadParams("input.thread must be an object and input.id a string or null")
        return call_id, target, (thread, target_id, ctx_s), signal

    def _takes_arguments(self, key: str, method: Callable[..., Any]) -> bool:
        """Whether a command's `execute` accepts the arguments as its second positional parameter."""
        if key not in self._second_arg:
            self._second_arg[key] = _accepts_two(method)
        return self._second_arg[key]

    def _run(self, request_id: Any, call_id: str, target: Callable[..., Any], args: tuple[Any, ...], signal: CallSignal) -> None:
        try:
            value = target(*args)
            if isinstance(value, Awaitable):
                value = run_async(value, signal)
        except BaseException as exc:
            outcome: tuple[str, Any] = ("raised", exc)
        else:
            outcome = ("returned", value)
        finally:
            with self._lock:
                self._running.pop(call_id, None)
        try:
            self._answer(request_id, signal, *outcome)
        except OSError:
            pass  # the app is gone; the host ends with its input

    def _answer(self, request_id: Any, signal: CallSignal, how: str, value: Any) -> None:
        if signal.aborted:
            reason = signal.reason or DEFAULT_CANCEL_REASON
            self._conn.respond_error(request_id, CANCELLED, reason, {"reason": reason})
            return
        if how == "raised":
            self._conn.respond_error(request_id, RAISED, *raised(value))
            return
        try:
            if isinstance(value, PluginResult):
                self._conn.respond(request_id, {"type": "result", "result": value.payload})
            else:
                self._conn.respond(request_id, {"type": "value", "value": to_json(value)})
        except NotJSON as exc:
            self._conn.respond_error(request_id, NOT_JSON, f"the return value is not JSON: {exc}",
                                     {"type": exc.type, "where": exc.where})
        except TooLarge as exc:
            self._conn.respond_error(request_id, RAISED, str(exc), {"name": "ValueError", "message": str(exc), "stack": ""})
        except OSError:
            raise
        except Exception as exc:  # json.dumps refused it (an int over 4,300 digits, nesting too deep, …)
            self._conn.respond_error(request_id, NOT_JSON, f"the return value is not JSON: {type(exc).__name__}: "
                                     f"{str(exc)[:200]}", {"type": type(exc).__name__, "where": "$"})

    def shutdown(self) -> dict[str, Any]:
        """Refuse new calls, dispose every instance (in parallel, each bounded to 3 s)."""
        with self._lock:
            self._closing = True
        pending: list[tuple[str, threading.Thread, list[BaseException | None]]] = []
        for ext in self._all:
            dispose = getattr(ext.instance, "dispose", None) if ext.instance is not None else None
            if not callable(dispose):
                continue
            slot: list[BaseException | None] = []
            worker = threading.Thread(target=_dispose, args=(dispose, slot), name=f"plugin-dispose-{ext.key}", daemon=True)
            worker.start()
            pending.append((ext.key, worker, slot))
        deadline = time.monotonic() + DISPOSE_TIMEOUT
        disposed: list[str] = []
        failed: list[dict[str, str]] = []
        for key, worker, slot in pending:
            worker.join(max(0.0, deadline - time.monotonic()))
            if worker.is_alive():
                failed.append({"id": key, "message": f"dispose() did not finish within {DISPOSE_TIMEOUT:g} s"})
            elif slot and slot[0] is not None:
                failed.append({"id": key, "message": raised(slot[0])[0]})
            else:
                disposed.append(key)
        return {"disposed": disposed, "failed": failed}


def _dispose(dispose: Callable[[], Any], slot: list[BaseException | None]) -> None:
    try:
        value = dispose()
        if isinstance(value, Awaitable):
            run_async(value, None)
        slot.append(None)
    except BaseException as exc:
        slot.append(exc)


def run_async(awaitable: Awaitable[Any], signal: CallSignal | None) -> Any:
    """Run a coroutine (or awaitable) to its end on this thread; cancel its task when `signal` fires."""
    import asyncio

    async def main() -> Any:
        task = asyncio.ensure_future(awaitable)
        if signal is None:
            return await task
        loop = asyncio.get_running_loop()

        def on_abort() -> None:
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:
                pass  # the loop is closed: the call is over

        signal.add_listener(on_abort)
        try:
            return await task
        finally:
            signal.remove_listener(on_abort)

    return asyncio.run(main())


def raised(exc: BaseException) -> tuple[str, dict[str, str]]:
    """An exception → (the message the app shows, the error's `data`)."""
    name = type(exc).__name__
    text = str(exc).strip()
    message = text or name
    return message, {"name": name, "message": message, "stack": _stack(exc)}


def _stack(exc: BaseException) -> str:
    import traceback

    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None and _is_host_frame(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb)).rstrip()


def _is_host_frame(filename: str) -> bool:
    return filename.startswith(_HOST_DIRS) or f"{os.sep}asyncio{os.sep}" in filename


def _accepts_two(method: Callable[..., Any]) -> bool:
    import inspect

    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = 0
    for p in parameters:
        if p.kind is p.VAR_POSITIONAL:
            return True
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional += 1
    return positional >= 2


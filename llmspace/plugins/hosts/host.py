"""`PluginHost`: one host process of one plugin and runtime, started when needed, with
timeouts, cancellation, crash recovery and backoff (docs/plugin-protocol.md, "Lifecycle").

    host = PluginHost(spec, launch=python_launch, frontend=ConsoleFrontend(), log=diagnostics)
    meta = host.initialize()                 # starts the process; the extensions it loaded
    result = host.call("tool", "city-facts", "execute", {"arguments": {…}}, {"settings": …},
                       timeout=120, cancel=token)
    host.stop("disabled")                    # dispose() in the host, bounded, then kill

Calls run concurrently; each waits for its answer with a bound. Cancel (or the timeout)
sends `cancel` so the plugin's signal fires; a call still running `CANCEL_GRACE` seconds
later is abandoned: the host is killed and the next call starts a fresh one. A host that
dies fails its calls with `CallFailed(kind="crash")` and an error-id log; after a second
crash within a minute restarts wait 1, 2, 4 … up to 30 s (calls meanwhile fail at once
saying when it will be tried again).
"""

from __future__ import annotations

import itertools
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...cancel import CancelToken
from ...core.names import plain_text
from ...errors import UserFacingError
from ...jsonio import SETTINGS_MAX_BYTES, read_json
from ...plugin_protocol import (
    CANCEL,
    CANCELLED,
    DEFAULT_CANCEL_REASON,
    EXECUTE,
    INITIALIZE,
    NOT_JSON,
    PROTOCOL_VERSION,
    RAISED,
    UNAVAILABLE,
    CancelParams,
    ExecuteParams,
    InitializeParams,
)
from ...redact import KNOWN
from ..diagnostics import DiagnosticLog
from .callbacks import CallState, Frontend, handle_callback, plain_value
from .connection import DEFAULT_MEMORY_MB, CallbackRefused, HostConnection, HostGone, RemoteError
from .sandbox import GUARD_FLAG, confined_environment, plan_descriptors, sandbox_off, temp_folder
from .spec import HostSpec, Launch
from .tempdir import TempFolder

log = logging.getLogger("llmspace.plugins")

CANCEL_GRACE = 2.0
START_TIMEOUT = 20.0
CRASH_WINDOW = 60.0
MAX_BACKOFF = 30.0
HOSTS_SETTINGS = "plugin-hosts"  # settings/plugin-hosts.json: {"hostMemoryMB": 2048, "hostTempMB": 1024}
DEFAULT_TEMP_MB = 1024
_ids = itertools.count(1)


class CallFailed(UserFacingError):
    """A plugin call that did not produce a result. `kind`: error (the plugin raised),
    cancelled, timeout, crash, unavailable, refused (bad result). `stack`: the plugin's
    traceback (for the log, never for the model)."""

    def __init__(self, message: str, *, kind: str, hint: str = "", stack: str = "",
                 error_id: str = "", log_path: Path | None = None) -> None:
        super().__init__(message, hint=hint)
        self.kind, self.stack, self.error_id, self.log_path = kind, stack, error_id, log_path


class RuntimeMissing(UserFacingError):
    """No runtime can run these files (the message names what to install)."""


def python_launch(spec: HostSpec) -> list[str]:
    """The command that starts the Python host (the frozen executable hosts it too)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "--plugin-host"]
    return [sys.executable, "-X", "utf8", "-m", "llmspace", "--plugin-host"]


def guarded(argv: list[str]) -> list[str]:
    """`argv` started through `llmspace/plugin_host/guard.py`, which sets `PR_SET_PDEATHSIG`,
    applies the Landlock plan and then execs it (for runtimes that cannot do either themselves:
    Node, Bun). The frozen executable has no separate interpreter: it is the launcher itself
    (`--plugin-guard`, dispatched first in llmspace/__main__.py). Linux only."""
    if not sys.platform.startswith("linux"):
        return argv
    if getattr(sys, "frozen", False):
        return [sys.executable, GUARD_FLAG, *argv]
    guard = Path(__file__).resolve().parents[2] / "plugin_host" / "guard.py"  # llmspace/plugin_host/guard.py
    return [sys.executable, "-I", "-S", str(guard), *argv]


def memory_limit_mb(settings_file: Path) -> int:
    """`hostMemoryMB` of settings/plugin-hosts.json: the most a plugin host's processes may
    keep resident (default 2048; a missing, unreadable or invalid value gives the default)."""
    return _limit_mb(settings_file, "hostMemoryMB", DEFAULT_MEMORY_MB)


def temp_limit_mb(settings_file: Path) -> int:
    """`hostTempMB` of settings/plugin-hosts.json: the most a confined plugin's temp folder may
    hold, and the largest file its host may write (default 1024; llmspace/plugins/hosts/tempdir.py)."""
    return _limit_mb(settings_file, "hostTempMB", DEFAULT_TEMP_MB)


def _limit_mb(settings_file: Path, key: str, default: int) -> int:
    try:
        data = read_json(settings_file, max_bytes=SETTINGS_MAX_BYTES) if settings_file.exists() else {}
    except UserFacingError as exc:
        log.warning("%s; plugin hosts keep the default %s", exc.message, key)
        return default
    value = data.get(key) if isinstance(data, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 64:
        return value
    if value is not None:
        log.warning("%s: %s must be a whole number of MB, at least 64; using %d", settings_file, key, default)
    return default


def host_environment(spec: HostSpec, base: Mapping[str, str] | None = None,
                     argv: list[str] | None = None) -> dict[str, str]:
    """The host's environment: `base` (the app's), cut down and given its confinement plan by
    the plugin's capabilities (llmspace/plugins/hosts/sandbox.py)."""
    env = dict(os.environ if base is None else base)
    if not getattr(sys, "frozen", False):
        package_parent = str(Path(__file__).resolve().parents[3])  # the folder holding llmspace/
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH", "")) if p)
    env["LLM_SPACE_HOME"] = str(spec.data_home)
    env["PYTHONIOENCODING"] = "utf-8"
    env.pop("PYTHONSTARTUP", None)
    env = confined_environment(spec, env, argv or [])
    if getattr(sys, "frozen", False) and "LD_LIBRARY_PATH" in env:
        # The host is this executable again: its runtime hook (build/rthook_environment.py) puts
        # back the value the bootloader kept aside, else drops it; keep the user's for Node, Bun
        # and the programs a plugin starts.
        env["LD_LIBRARY_PATH_ORIG"] = env["LD_LIBRARY_PATH"]
    return env


@dataclass
class _Crashes:
    times: list[float] = field(default_factory=list)

    def add(self, now: float) -> None:
        self.times = [t for t in self.times if now - t < CRASH_WINDOW] + [now]

    def wait_left(self, now: float) -> float:
        recent = [t for t in self.times if now - t < CRASH_WINDOW]
        if len(recent) < 2:
            return 0.0
        backoff = min(MAX_BACKOFF, 2.0 ** (len(recent) - 2))
        return max(0.0, recent[-1] + backoff - now)


class PluginHost:
    def __init__(self, spec: HostSpec, *, launch: Launch, frontend: Frontend, log: DiagnosticLog,
                 output: Callable[[str], None] | None = None, environ: Mapping[str, str] | None = None,
                 clock: Callable[[], float] = time.monotonic, memory_mb: int = DEFAULT_MEMORY_MB,
                 temp_mb: int = DEFAULT_TEMP_MB) -> None:
        self.spec, self.launch, self.frontend, self.log = spec, launch, frontend, log
        self.memory_mb, self.temp_mb = memory_mb, temp_mb
        self.output, self.environ, self.clock = output, environ, clock
        self._lock = threading.RLock()
        self._conn: HostConnection | None = None
        self._meta: dict[str, Any] | None = None
        self._calls: dict[str, CallState] = {}
        self._crashes = _Crashes()
        self._closed = False
        self._stopping = 0  # idle stops under way (the process still exists meanwhile)
        self.last_used = clock()
        self.starts = 0

    # -- starting ------------------------------------------------------------------------
    def initialize(self) -> dict[str, Any]:
        """Start the host if needed; the `initialize` answer (runtime, extensions)."""
        with self._lock:
            self._ensure()
            assert self._meta is not None
            return self._meta

    def _ensure(self) -> HostConnection:
        if self._closed:
            raise CallFailed(f"Plugin {self.spec.plugin} is disabled or was reloaded; its calls are refused.",
                             kind="unavailable")
        conn = self._conn
        if conn is not None and conn.alive:
            return conn
        if conn is not None:
            conn.kill()
            self._conn = None
        left = self._crashes.wait_left(self.clock())
        if left > 0:
            raise CallFailed(f"The plugin host of {self.spec.label} crashed repeatedly; it will be started "
                             f"again in {left:.0f} s.", kind="unavailable",
                             hint=f"See `llmspace plugins info {self.spec.plugin}` for its logs.")
        argv = self.launch(self.spec)
        env = host_environment(self.spec, self.environ, argv)
        inherited = plan_descriptors(env)  # a long sandbox plan: a sealed memory file for this host alone
        try:
            conn = HostConnection(argv, cwd=self.spec.root, env=env, label=self.spec.label,
                                  on_request=self._on_request, on_output=self.output, memory_mb=self.memory_mb,
                                  temp=self._temp_folder(),
                                  pass_fds=inherited)
            conn.start()
        except OSError as exc:
            raise CallFailed(f"Could not start the plugin host of {self.spec.label}: {exc.strerror or exc}",
                             kind="crash") from None
        finally:
            for fd in inherited:
                os.close(fd)
        self.starts += 1
        answer = conn.send(INITIALIZE, self._init_params())
        if not answer.wait(START_TIMEOUT):
            conn.kill()
            raise self._crash(f"The plugin host of {self.spec.label} did not start within {START_TIMEOUT:g} s.", conn)
        try:
            meta = answer.value()
        except (HostGone, RemoteError) as exc:
            conn.kill()
            raise self._crash(str(exc) or f"The plugin host of {self.spec.label} could not load the plugin.",
                              conn) from None
        if not isinstance(meta, dict) or not isinstance(meta.get("extensions"), list):
            conn.kill()
            raise self._crash(f"The plugin host of {self.spec.label} answered initialize with something unexpected.",
                              conn)
        self._conn, self._meta = conn, plain_value(meta)  # what the plugin reports is shown: no control characters
        self.last_used = self.clock()
        return conn

    def _temp_folder(self) -> TempFolder | None:
        """The plugin's private temp folder with its quota (a confined plugin's: sandbox.py
        makes one; a legacy plugin or LLM_SPACE_SANDBOX=off has none)."""
        if self.spec.capabilities is None or sandbox_off(os.environ if self.environ is None else self.environ):
            return None
        return TempFolder(temp_folder(self.spec), self.temp_mb)

    def _init_params(self) -> InitializeParams:
        s = self.spec
        return {"protocolVersion": PROTOCOL_VERSION, "appVersion": s.app_version,
                "plugin": {"name": s.plugin, "version": s.version, "root": str(s.root)},
                "workspace": str(s.workspace),
                "files": [{"kind": f.kind, "id": f.id, "path": str(f.path)} for f in s.files]}

    def _crash(self, message: str, conn: HostConnection | None) -> CallFailed:
        self._crashes.add(self.clock())
        tail = conn.tail() if conn is not None else ""
        diag = self.log.write(self.spec.plugin, "host", message,
                              detail=f"runtime: {self.spec.runtime}\nlast output of the host:\n{tail[-8000:]}")
        return CallFailed(message, kind="crash", hint=_log_hint(diag.error_id, diag.log_path),
                          error_id=diag.error_id, log_path=diag.log_path)

    # -- calls ---------------------------------------------------------------------------
    def call(self, kind: str, ident: str, method: str, payload: dict[str, Any], context: dict[str, Any], *,
             timeout: float | None, cancel: CancelToken | None = None,
             state: CallState | None = None) -> dict[str, Any]:
        """Run one extension method in the host process (where a plugin tool call, command or
        storage call crosses the process boundary: an `execute` request over the connection);
        its `{"type": "value"|"result", …}` answer, or `CallFailed`."""
        call_id = state.call_id if state is not None else new_call_id()
        if state is None:
            state = CallState(call_id, self.spec.plugin, kind, self.spec.workspace)
        with self._lock:  # one step, so that an idle stop never takes the host from under a call
            conn = self._ensure()
            self._calls[call_id] = state
        try:
            params: ExecuteParams = {"callId": call_id, "kind": kind, "id": ident, "method": method,
                                     "input": payload, "context": context}
            pending = conn.send(EXECUTE, params)
            stop = conn.wait(pending, timeout, cancel, self.clock)
            if stop:
                return self._stop_call(conn, pending, call_id, stop, timeout)
            return self._answer(pending.value, conn)
        finally:
            state.finished = True
            with self._lock:
                self._calls.pop(call_id, None)
                self.last_used = self.clock()

    def _answer(self, value: Callable[[], Any], conn: HostConnection) -> dict[str, Any]:
        try:
            result = value()
        except RemoteError as exc:
            raise _remote_failure(exc) from None
        except HostGone as exc:
            with self._lock:
                expected = self._closed
            if expected:
                raise CallFailed(str(exc), kind="unavailable") from None
            raise self._crash(str(exc), conn) from None
        if not isinstance(result, dict) or result.get("type") not in ("value", "result"):
            raise CallFailed(f"The plugin host of {self.spec.label} sent an answer this app does not understand.",
                             kind="refused")
        return result

    def _stop_call(self, conn: HostConnection, pending: Any, call_id: str, why: str,
                   timeout: float | None) -> dict[str, Any]:
        reason = DEFAULT_CANCEL_REASON if why == "cancelled" else f"Timed out after {timeout:g} s"
        cancel: CancelParams = {"callId": call_id, "reason": reason}
        conn.notify(CANCEL, cancel)
        message = "Cancelled" if why == "cancelled" else f"The plugin call timed out after {timeout:g} s."
        if pending.wait(CANCEL_GRACE):
            conn.forget(pending)
            raise CallFailed(message, kind=why)
        # The plugin ignored its signal: abandon the call (and the host it blocks).
        conn.mark_stopping(f"The plugin host of {self.spec.label} was restarted: a call ignored its "
                           f"cancellation for {CANCEL_GRACE:g} s.")
        conn.kill()
        with self._lock:
            if self._conn is conn:
                self._conn = None
        raise CallFailed(f"{message} The plugin did not stop within {CANCEL_GRACE:g} s, so its host was "
                         "restarted.", kind=why)

    def _on_request(self, method: str, params: dict[str, Any]) -> Any:
        call_id = params.get("callId")
        with self._lock:
            state = self._calls.get(call_id) if isinstance(call_id, str) else None
        if state is None:
            raise CallbackRefused(f"{method} does not belong to a running call.")
        return handle_callback(state, self.frontend, method, params)

    # -- ending --------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """Whether a host process of this plugin exists (also while an idle stop ends it)."""
        conn = self._conn
        return self._stopping > 0 or (conn is not None and conn.alive)

    @property
    def busy(self) -> bool:
        return bool(self._calls)

    def stop_if_idle(self, idle_seconds: float) -> bool:
        """End the process when no call ran for `idle_seconds` (the next call starts it again)."""
        with self._lock:
            conn = self._conn
            if conn is None or not conn.alive or self._calls or self.clock() - self.last_used < idle_seconds:
                return False
            self._conn, self._meta = None, None
            self._stopping += 1
        try:
            conn.close()
        finally:
            with self._lock:
                self._stopping -= 1
        return True

    def stop(self, reason: str = "stopped", *, final: bool = True) -> list[str]:
        """Refuse new calls (when `final`), dispose the instances and end the process,
        with bounded waits; returns what went wrong."""
        with self._lock:
            if final:
                self._closed = True
            conn, self._conn = self._conn, None
            self._meta = None
        if conn is None:
            return []
        return conn.close()


def new_call_id() -> str:
    return f"c{next(_ids)}"


def _log_hint(error_id: str, path: Path | None) -> str:
    where = f" Log: {path}" if path is not None else ""
    return f"Error-id {error_id}.{where}"


def _remote_failure(exc: RemoteError) -> CallFailed:
    """The `CallFailed` of a host's error answer; the plugin's text loses its control characters."""
    data = exc.data if isinstance(exc.data, dict) else {}
    if exc.code == RAISED:
        message = str(data.get("message") or exc.message or data.get("name") or "The plugin raised an error.")
        return CallFailed(KNOWN.text(plain_text(message)), kind="error", stack=str(data.get("stack") or ""))
    if exc.code == CANCELLED:
        return CallFailed("Cancelled", kind="cancelled")
    if exc.code == NOT_JSON:
        kind = data.get("type")
        return CallFailed("The plugin returned a value that is not JSON"
                          + (f" ({plain_text(kind)})" if isinstance(kind, str) and kind else "") + ".", kind="refused")
    if exc.code == UNAVAILABLE:
        return CallFailed(plain_text(str(data.get("reason") or exc.message)), kind="unavailable")
    return CallFailed(plain_text(exc.message) or f"The plugin host answered with error {exc.code}.", kind="error")

"""One connection to a plugin host process: the app's end of docs/plugin-protocol.md.

    conn = HostConnection(argv, cwd=plugin_root, env=env, label="atlas (python)",
                          on_request=answer_callback, on_output=plugin_log_line)
    conn.start()
    pending = conn.send("execute", params)     # a `Pending`; wait on it with a bound
    if pending.wait(30): value = pending.value()  # RemoteError / HostGone
    why = conn.wait(pending, 30, cancel)        # "" | "cancelled" | "timeout"
    conn.notify("cancel", {"callId": …})
    conn.close()                                # shutdown, bounded waits, then kill

Newline-delimited JSON-RPC 2.0 both ways, each line written with orjson (`encode_line`).
stdout is read by the thread waiting for an answer when no other thread reads it, else by a
background thread (`LineReader`, llmspace/plugins/hosts/reader.py): answers
complete the matching `Pending`; host requests (context callbacks) run on a small pool via
`on_request(method, params)`, whose return value is the answer (`CallbackRefused` becomes
error -32010 with its message). A second thread reads stderr (`StderrReader`,
llmspace/plugins/hosts/stderr.py: lines to `on_output`, capped, the last 64 KiB kept for crash
reports); it never blocks the stop. When the process ends or breaks
the protocol every pending request fails with `HostGone`. The host runs in a new session and,
where one can be made, a cgroup of its own; ending it (or its own end) kills its group, its
cgroup, its process tree and the orphans it left (llmspace/plugins/hosts/proctree.py). On
Linux a third thread measures the resident memory of all of them every second and stops the
host above `memory_mb`, and above the quota of its plugin's temp folder (`temp`,
llmspace/plugins/hosts/tempdir.py), which is emptied once the host ended.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson

from ...plugin_protocol import INTERNAL_ERROR as INTERNAL
from ...plugin_protocol import REFUSED, SHUTDOWN
from . import proctree
from .reader import Cancel, LineReader
from .stderr import StderrReader, close_quietly
from .tempdir import TempFolder

log = logging.getLogger("llmspace.plugins")

MAX_LINE = 64 * 1024 * 1024
SHUTDOWN_WAIT = 5.0
EXIT_WAIT = 2.0
WATCH_EVERY = 1.0  # how often the memory of a host's process tree is measured
DEFAULT_MEMORY_MB = 2048


# orjson for the plain JSON data messages hold; what it would write differently from `json`
# (these types raise, and `json` decides) goes through `json`
_ORJSON = (orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
           | orjson.OPT_APPEND_NEWLINE)


def encode_line(message: Mapping[str, Any]) -> bytes:
    """One message as one UTF-8 line, as `json.dumps(ensure_ascii=False, compact,
    allow_nan=False)` writes it (but for the spelling of some floats, 1.5e-7 for 1.5e-07: the
    same values), about ten times faster (orjson). Integers over 64 bits, lone surrogates,
    keys that are not strings and subclasses of the JSON types go through `json`; so does any
    line holding `null`, since orjson writes NaN and the infinities as null where `json`
    refuses them (ValueError), as this does. (orjson writes an `enum.Enum` or a UUID as its
    value, where `json` raises TypeError; messages hold neither.)"""
    try:
        line = orjson.dumps(message, option=_ORJSON)
    except TypeError:  # orjson.JSONEncodeError
        line = b"null"
    if b"null" in line:
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode() + b"\n"
    return line


class RemoteError(Exception):
    """An error answer of the host (`code`, `message`, `data` as sent)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class HostGone(Exception):
    """The host process ended (or broke the protocol) before answering."""


class CallbackRefused(Exception):
    """Raised by a callback handler: the plugin gets this message as an error."""


class Pending:
    """One request waiting for its answer."""

    __slots__ = ("_callbacks", "_done", "_error", "_reader", "_result", "method")

    def __init__(self, method: str, reader: LineReader | None = None) -> None:
        self.method = method
        self._done = threading.Event()
        self._result: Any = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[], object]] = []
        self._reader = reader

    def wait(self, timeout: float | None, cancel: Cancel | None = None,
             clock: Callable[[], float] = time.monotonic) -> bool:
        """Whether the answer came within `timeout` (or before the cancel); the waiting thread
        reads the host's output meanwhile when no other does (llmspace/plugins/hosts/reader.py)."""
        if self._reader is None or self._done.is_set():
            return self._done.wait(timeout)
        self._reader.wait(self._done.is_set, timeout, cancel, clock)
        return self._done.is_set()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def on_done(self, callback: Callable[[], object]) -> None:
        """Run `callback` once the answer is in (at once if it is already)."""
        self._callbacks.append(callback)
        if self._done.is_set():
            callback()  # may run twice when settle ran meanwhile: callbacks must not mind (Event.set)

    def value(self) -> Any:
        """The result (raises the `RemoteError` / `HostGone` it ended with)."""
        if self._error is not None:
            raise self._error
        return self._result

    def settle(self, result: Any = None, error: BaseException | None = None) -> None:
        if self._done.is_set():
            return
        self._result, self._error = result, error
        self._done.set()
        for callback in list(self._callbacks):
            callback()


class HostConnection:
    def __init__(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], label: str,
                 on_request: Callable[[str, dict[str, Any]], Any],
                 on_output: Callable[[str], None] | None = None, memory_mb: int | None = DEFAULT_MEMORY_MB,
                 temp: TempFolder | None = None,
                 clock: Callable[[], float] = time.monotonic, pass_fds: Sequence[int] = ()) -> None:
        self.argv, self.cwd, self.env, self.label = list(argv), cwd, dict(env), label
        self.pass_fds = tuple(pass_fds)  # inherited by the host (its sealed sandbox plan: sandbox.py)
        self.memory_mb, self.clock = memory_mb, clock
        self.token = uuid.uuid4().hex
        self.env[proctree.TOKEN_ENV] = self.token
        self.env[proctree.PARENT_ENV] = str(os.getpid())
        if memory_mb:
            self.env["LLM_SPACE_HOST_MEMORY_MB"] = str(memory_mb)
        self._ended = threading.Event()  # the host was stopped: the stderr reader and the watch end
        self._adopted: set[int] = set()  # orphans of the host's children that this process adopted
        self._seen: dict[int, str] = {}  # the host's processes at the last look (pid → start time)
        self.cgroup: proctree.HostCgroup | None = None
        self.temp = temp
        self.on_request, self.on_output = on_request, on_output
        self.stderr = StderrReader(label, on_output, ended=self._ended, clock=clock)
        self.proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._pending: dict[int, Pending] = {}
        self._next_id = 0
        self._gone: str | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._reader: LineReader | None = None

    # -- process -------------------------------------------------------------------------
    def start(self) -> None:
        """Start the process and its reader threads (raises OSError when it cannot start)."""
        proctree.become_subreaper()
        self.proc = proctree.SPAWNER.popen(self.argv, cwd=str(self.cwd), env=self.env, stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                           pass_fds=self.pass_fds)
        self.cgroup = proctree.HostCgroup.make(self.token, self.proc.pid)  # before it reads a request
        if self.temp is not None:
            self.temp.use()
            self.temp.limit(self.proc.pid)
        assert self.proc.stdout is not None
        self._reader = LineReader(self.proc.stdout.fileno(), handle=self._dispatch, on_end=self._fail_all,
                                  name=self.label, max_line=MAX_LINE)
        self._reader.start()
        threading.Thread(target=self.stderr.read, args=(self.proc.stderr,), name=f"plugin-host-err {self.label}",
                         daemon=True).start()
        if proctree.LINUX and (self.memory_mb or self.temp is not None):
            threading.Thread(target=self._watch, name=f"plugin-host-watch {self.label}", daemon=True).start()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self._gone is None and self.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def tail(self) -> str:
        """The last stderr lines of the host (for crash reports)."""
        return self.stderr.tail()

    @property
    def dropped(self) -> int:
        """stderr bytes dropped and not yet noted in the output (over a line's cap or the rate)."""
        return self.stderr.dropped

    def gone_reason(self) -> str | None:
        return self._gone

    # -- messages ------------------------------------------------------------------------
    def send(self, method: str, params: Mapping[str, Any] | None = None) -> Pending:
        """Send a request; the returned `Pending` completes with the answer or `HostGone`."""
        pending = Pending(method, self._reader)
        with self._lock:
            if self._gone is not None:
                pending.settle(error=HostGone(self._gone))
                return pending
            self._next_id += 1
            ident = self._next_id
            self._pending[ident] = pending
        message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": dict(params or {})}
        if not self._write(message):
            with self._lock:
                self._pending.pop(ident, None)
            pending.settle(error=HostGone(self._gone or f"the plugin host of {self.label} is not running"))
        return pending

    def wait(self, pending: Pending, timeout: float | None, cancel: Cancel | None = None,
             clock: Callable[[], float] = time.monotonic) -> str:
        """Wait for `pending`'s answer, the cancel or the timeout, whichever comes first: ""
        (answered), "cancelled" or "timeout". The answer and the cancel each wake the wait (no
        polling); the waiting thread reads the host's output itself when no other does."""
        if self._reader is None:
            return "" if pending.wait(timeout) else "timeout"
        return self._reader.wait(pending._done.is_set, timeout, cancel, clock)

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": dict(params or {})})

    def forget(self, pending: Pending) -> None:
        """Stop tracking `pending` (its late answer is dropped)."""
        with self._lock:
            for key, value in list(self._pending.items()):
                if value is pending:
                    del self._pending[key]

    def _write(self, message: dict[str, Any]) -> bool:
        proc = self.proc
        if proc is None or proc.stdin is None:
            return False
        data = encode_line(message)
        try:
            with self._write_lock:
                proc.stdin.write(data)
                proc.stdin.flush()
        except (OSError, ValueError):  # the host is gone; the reader reports why
            return False
        return True

    # -- reading (llmspace/plugins/hosts/reader.py reads; these handle) -----------------------
    def _dispatch(self, line: bytes) -> str:
        """Handle one line; a non-empty return is a protocol error (the host is ended)."""
        try:
            message = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            return "wrote something that is not a protocol message to its output"
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return "wrote something that is not a JSON-RPC 2.0 message to its output"
        if "method" in message:
            self._callback(message)
            return ""
        ident = message.get("id")
        with self._lock:
            pending = self._pending.pop(ident, None) if isinstance(ident, int) else None
        if pending is None:
            return ""  # a late answer to a forgotten request
        error = message.get("error")
        if isinstance(error, dict):
            pending.settle(error=RemoteError(int(error.get("code", INTERNAL)) if isinstance(error.get("code"), int)
                                             else INTERNAL, str(error.get("message", "")), error.get("data")))
        else:
            pending.settle(message.get("result"))
        return ""

    def _callback(self, message: dict[str, Any]) -> None:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix=f"plugin-callback {self.label}")
            pool = self._pool
        try:
            pool.submit(self._answer, message)
        except RuntimeError:  # closing
            pass

    def _answer(self, message: dict[str, Any]) -> None:
        ident, method = message.get("id"), str(message.get("method"))
        raw = message.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": ident}
        try:
            reply["result"] = self.on_request(method, params)
        except CallbackRefused as exc:
            reply["error"] = {"code": REFUSED, "message": str(exc)}
        except Exception:
            log.exception("plugin callback %s of %s failed", method, self.label)
            reply["error"] = {"code": INTERNAL, "message": f"LLM Space could not handle {method}; see its log."}
        if ident is not None:
            self._write(reply)

    # -- the process tree ------------------------------------------------------------------
    def _watch(self) -> None:
        """Every `WATCH_EVERY` s: the resident memory of the host's processes (its cgroup and
        its tree); above `memory_mb` the host is stopped, and so it is when its temp folder
        holds more than its quota. Orphans it left this process are noted (and reaped when
        they end)."""
        proc = self.proc
        assert proc is not None
        while not self._ended.wait(WATCH_EVERY) and proc.poll() is None:
            tree = proctree.host_processes(proc.pid, self.token, self.cgroup)
            me = os.getpid()
            stats = {pid: proctree.stat(pid) for pid in tree if pid != proc.pid}
            adopted = {pid for pid, (ppid, _) in stats.items() if ppid == me}
            with self._lock:
                gone = self._adopted - set(tree)
                self._adopted = (self._adopted | adopted) - gone
                self._seen = tree
            proctree.reap_adopted(gone | {pid for pid in adopted if stats[pid][1] == "Z"})
            why = self._over_limits(tree)
            if why:
                self.mark_stopping(f"The plugin host of {self.label} was stopped: {why}")
                log.warning("plugin host %s stopped: %s", self.label, why)
                self.kill()
                return

    def _over_limits(self, tree: dict[int, str]) -> str:
        """Why the host's processes take more than they may ("" when they do not)."""
        used = proctree.rss_mb(tree)
        if self.memory_mb and used > self.memory_mb:
            return (f"plugin host exceeded {self.memory_mb} MB ({used:.0f} MB resident). The limit is "
                    "`hostMemoryMB` in settings/plugin-hosts.json.")
        why = self.temp.over() if self.temp is not None else ""
        if why:
            return (f"{why}; it was emptied. The limit is `hostTempMB` in settings/plugin-hosts.json.")
        return ""

    def _end_tree(self, tree: dict[int, str] | None = None) -> None:
        """Kill the host's process group, its cgroup, then every process of its tree (taken
        before it ended, at the last look, and again now) and the orphans it left this process,
        reaping them; then its temp folder is done with."""
        proc = self.proc
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
        if self.cgroup is not None:
            self.cgroup.end(skip=proc.pid)
        every = dict(tree or {})
        every.update(proctree.host_tree(None, self.token))
        with self._lock:
            adopted, self._adopted = self._adopted, set()
            seen, self._seen = self._seen, {}
        every.update({pid: "" for pid in adopted if pid not in every})
        every.update({pid: started for pid, started in seen.items() if pid not in every})
        proctree.kill_tree(every, skip=proc.pid)
        if self.temp is not None:
            self.temp.ended()

    def _fail_all(self, problem: str) -> None:
        proc = self.proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(EXIT_WAIT) if not problem else proc.poll()
            except subprocess.TimeoutExpired:
                code = None
        if problem:
            reason = f"The plugin host of {self.label} {problem}; it was stopped."
            self.kill()
        elif code is None:
            reason = f"The plugin host of {self.label} closed its output."
        else:
            reason = f"The plugin host of {self.label} stopped unexpectedly (exit code {_exit_text(code)})."
        with self._lock:
            if self._gone is None:
                self._gone = reason
            pending, self._pending = list(self._pending.values()), {}
        for p in pending:
            p.settle(error=HostGone(self._gone))
        if code is not None and not problem:  # it ended by itself: what it started ends too
            self._end_tree()

    # -- ending --------------------------------------------------------------------------
    def mark_stopping(self, reason: str) -> None:
        """From now on, an end of the process is expected: pending calls fail with `reason`."""
        with self._lock:
            if self._gone is None:
                self._gone = reason

    def close(self, *, shutdown_wait: float = SHUTDOWN_WAIT, exit_wait: float = EXIT_WAIT) -> list[str]:
        """Ask the host to dispose its instances and exit; kill it when it does not in time.
        Returns what went wrong (named waits that ran out), empty when it ended cleanly."""
        problems: list[str] = []
        proc = self.proc
        if proc is None:
            return problems
        tree = proctree.host_tree(proc.pid, self.token) if proc.poll() is None else {}
        if proc.poll() is None and self._gone is None:
            answer = self.send(SHUTDOWN)
            if not answer.wait(shutdown_wait):
                problems.append(f"{self.label}: no answer to shutdown within {shutdown_wait:g} s")
        self.mark_stopping(f"The plugin host of {self.label} was stopped.")
        close_quietly(proc.stdin)
        try:
            proc.wait(exit_wait)
        except subprocess.TimeoutExpired:
            problems.append(f"{self.label}: still running {exit_wait:g} s after shutdown; killed")
            self.kill()
        self._end_tree(tree)
        self._finish()
        return problems

    def kill(self) -> None:
        """End the host and everything it started (its group, its tree, the orphans it left) now."""
        proc = self.proc
        if proc is None:
            return
        # every process of the host stopped first: none forks or leaves the tree meanwhile
        tree = proctree.stop_tree(proc.pid, self.token, self.cgroup) if proc.poll() is None else {}
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (OSError, AttributeError):
                try:
                    proc.kill()
                except OSError:
                    pass
            try:
                proc.wait(EXIT_WAIT)
            except subprocess.TimeoutExpired:
                log.warning("plugin host %s did not end after SIGKILL", self.label)
        self._end_tree(tree)
        self._ended.set()

    def _finish(self) -> None:
        proc = self.proc
        self._ended.set()  # the stderr reader closes stderr itself (closing it here could block)
        reader = self._reader
        if proc is not None and reader is not None:
            reader.read_to_end()
            if reader.done.wait(EXIT_WAIT):  # else a thread may still poll the pipe: it stays open
                reader.close()
                close_quietly(proc.stdout)
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"{code}, {signal.Signals(-code).name}"
        except ValueError:
            return str(code)
    return str(code)


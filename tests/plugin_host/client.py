"""A small test-only NDJSON JSON-RPC client of the Python plugin host.

`HostClient` starts `python -m llmspace --plugin-host` as a real subprocess (PYTHONPATH
points at this repository, so any working directory works), reads its stdout lines on a
thread, answers the host's callbacks with a handler the test provides, and keeps every
stderr byte. Every wait is bounded (`WAIT` seconds) on events. `write_plugin` writes a
plugin folder and `files_of` lists its code files the way the app would send them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
WAIT = 20.0
FOLDERS = {"tools": "tool", "commands": "command", "thread-storages": "thread-storage"}

Handler = Callable[[str, dict[str, Any]], Any]


class Refuse(Exception):
    """Raised by a test's handler: the callback is answered with this error."""

    def __init__(self, message: str, code: int = -32010) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def write_plugin(root: Path, files: dict[str, str]) -> Path:
    """Write `files` (relative path → source, dedented) under `root` with a package.json."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.json").write_text(json.dumps({"name": "test-plugin", "version": "1.0.0"}), encoding="utf-8")
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def files_of(root: Path) -> list[dict[str, str]]:
    """The code files of a plugin as `initialize` lists them (helpers such as `tools/_shared.py` left out)."""
    found = []
    for folder, kind in FOLDERS.items():
        for path in sorted((root / folder).glob("*.py")) if (root / folder).is_dir() else []:
            if not path.name.startswith("_"):
                found.append({"kind": kind, "id": path.stem, "path": str(path)})
    return found


def closing_starter(make: Callable[[Handler | None], HostClient]) -> Iterator[Callable[..., HostClient]]:
    """A fixture body: yields `start(handler=None)`, which makes a client with `make`; every
    client started is closed after the test."""
    clients: list[HostClient] = []

    def start(handler: Handler | None = None) -> HostClient:
        client = make(handler)
        clients.append(client)
        return client

    yield start
    for client in clients:
        client.close()


class HostClient:
    def __init__(self, cwd: Path, handler: Handler | None = None) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
        self._start([sys.executable, "-m", "llmspace", "--plugin-host"], cwd, env, handler)

    def _start(self, argv: list[str], cwd: Path, env: dict[str, str] | None, handler: Handler | None) -> None:
        """Start the host process `argv` and read its stdout and stderr on threads."""
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env,
        )
        self.handler: Handler = handler or (lambda _method, _params: None)
        self.callbacks: list[tuple[str, dict[str, Any]]] = []
        self.bad_lines: list[bytes] = []
        """stdout lines that are not JSON-RPC messages (a corrupted stream)."""
        self.orphans: list[dict[str, Any]] = []
        """Answers to no request of ours (the host's answers to junk have the id null)."""
        self._pending: dict[int, Future[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._next_id = 0
        self._stderr = bytearray()
        self._stderr_changed = threading.Condition()
        self._reader = threading.Thread(target=self._read_stdout, daemon=True)
        self._reader.start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    # -- sending -------------------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message).encode("utf-8") + b"\n")

    def send_raw(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        with self._lock:
            self.proc.stdin.write(line)
            self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> Future[dict[str, Any]]:
        """Send a request; the future resolves to the whole answer message."""
        future: Future[dict[str, Any]] = Future()
        with self._lock:
            self._next_id += 1
            request_id = self._next_id
            self._pending[request_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return future

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = WAIT) -> dict[str, Any]:
        return self.request(method, params).result(timeout)

    def result(self, method: str, params: dict[str, Any] | None = None) -> Any:
        answer = self.call(method, params)
        assert "error" not in answer, answer
        return answer["result"]

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, root: Path, files: list[dict[str, str]] | None = None) -> dict[str, Any]:
        params = {
            "protocolVersion": 1, "appVersion": "4.9.0",
            "plugin": {"name": "test-plugin", "version": "1.0.0", "root": str(root)},
            "workspace": str(root.parent), "files": files_of(root) if files is None else files,
        }
        return self.result("initialize", params)  # type: ignore[no-any-return]

    def execute_async(self, kind: str, ext_id: str, input: dict[str, Any], context: dict[str, Any] | None = None,
                      *, call_id: str | None = None, method: str = "execute") -> Future[dict[str, Any]]:
        with self._lock:
            call_id = call_id or f"c{self._next_id + 1}"
        params = {"callId": call_id, "kind": kind, "id": ext_id, "method": method, "input": input, "context": context or {}}
        return self.request("execute", params)

    def execute(self, kind: str, ext_id: str, input: dict[str, Any], context: dict[str, Any] | None = None,
                *, call_id: str | None = None, method: str = "execute") -> dict[str, Any]:
        """The whole answer message of one `execute`."""
        return self.execute_async(kind, ext_id, input, context, call_id=call_id, method=method).result(WAIT)

    def tool(self, ext_id: str, arguments: dict[str, Any] | None = None, context: dict[str, Any] | None = None) -> Any:
        """Run a tool and return its answer's `result` (asserting there was no error)."""
        answer = self.execute("tool", ext_id, {"arguments": arguments or {}}, context)
        assert "error" not in answer, answer
        return answer["result"]

    # -- ending --------------------------------------------------------------------------
    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        with self._lock:
            self.proc.stdin.close()

    def wait_exit(self, timeout: float = WAIT) -> int:
        return self.proc.wait(timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.close_stdin()
            except OSError:
                pass
            try:
                self.proc.wait(WAIT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(WAIT)
        self._reader.join(WAIT)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass

    # -- what the host said --------------------------------------------------------------
    @property
    def stderr(self) -> str:
        with self._stderr_changed:
            return self._stderr.decode("utf-8", "replace")

    def wait_stderr(self, text: str, timeout: float = WAIT) -> bool:
        with self._stderr_changed:
            return self._stderr_changed.wait_for(lambda: text.encode() in self._stderr, timeout)

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                self.bad_lines.append(line)
                continue
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                self.bad_lines.append(line)
            elif "method" in message:
                threading.Thread(target=self._answer_callback, args=(message,), daemon=True).start()
            else:
                with self._lock:
                    future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
                if future is None:
                    self.orphans.append(message)
                else:
                    future.set_result(message)
        with self._lock:
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_exception(EOFError("the host closed its stdout"))

    def _answer_callback(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params", {})
        with self._lock:
            self.callbacks.append((method, params))
        try:
            answer: dict[str, Any] = {"result": self.handler(method, params)}
        except Refuse as exc:
            answer = {"error": {"code": exc.code, "message": exc.message}}
        try:
            self.send({"jsonrpc": "2.0", "id": message["id"], **answer})
        except (OSError, ValueError):
            pass

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        while True:
            chunk = self.proc.stderr.read1(65536)
            if not chunk:
                return
            with self._stderr_changed:
                self._stderr += chunk
                self._stderr_changed.notify_all()

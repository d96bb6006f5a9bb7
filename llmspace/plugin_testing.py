"""A pytest plugin for plugin authors: run a plugin's tools and commands through a real host,
the way the app runs them (`docs/plugins.md`, "Testing"). A plugin's `conftest.py` says

    pytest_plugins = ["llmspace.plugin_testing"]

and its tests get these fixtures:

    plugin          a `PluginUnderTest`: the plugin folder (the one holding the package.json
                    above the test files) loaded as a dev plugin of a temporary data root,
                    through the same loader, host and callbacks as an installed plugin
    plugin_workspace  the temporary workspace its file callbacks are confined to
    model_server    a loopback OpenAI-compatible server that replays scripted answers

    def test_echo(plugin):
        assert plugin.tool("echo-text", {"text": "hi"}) == "hi"
        outcome = plugin.command("greet", ["World"], thread={"title": "Draft", "messages": []})
        assert outcome.level == "success" and plugin.notifications == [("Hello, World!", "info")]

`plugin.tool` returns the tool's value (`create_result` parts as the payload's dict);
a failure raises `PluginCallFailed`. `plugin.command` returns the app's `CommandOutcome`.
Notifications, links, host commands and reports are recorded on the `plugin` object, and a
thread a command stages with `writeThread` is kept in `plugin.written_threads`.
Settings: `plugin.set_settings({...})`. The plugin folder is `LLM_SPACE_PLUGIN_ROOT`
when set (what `llmspace plugins test` sets), else found upward from the test's folder.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .app import App
    from .core.model import Thread
    from .plugins.code.calls import CommandOutcome
    from .plugins.dev import DevSession
    from .plugins.hosts.callbacks import Report

TIMEOUT = 60.0
ROOT_ENV = "LLM_SPACE_PLUGIN_ROOT"


class PluginCallFailed(Exception):
    """A tool call that ended without a value (the plugin raised, timed out, …)."""


@dataclass
class Recorder:
    """The desktop's side of context calls, recorded (a `Frontend`)."""

    notifications: list[tuple[str, str]] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    host_commands: list[tuple[str, Any]] = field(default_factory=list)
    picked_files: list[str | None] = field(default_factory=list)

    def notify(self, plugin: str, message: str, level: str) -> None:
        self.notifications.append((message, level))

    def open_link(self, plugin: str, url: str) -> None:
        self.links.append(url)

    def pick_file(self, plugin: str, options: dict[str, Any]) -> str | None:
        return self.picked_files.pop(0) if self.picked_files else None

    def host_command(self, plugin: str, command: str, args: Any) -> None:
        self.host_commands.append((command, args))


def find_plugin_root(start: Path) -> Path:
    """`LLM_SPACE_PLUGIN_ROOT`, else the nearest folder holding package.json at or above `start`."""
    if os.environ.get(ROOT_ENV):
        return Path(os.environ[ROOT_ENV]).resolve()
    for folder in (start.resolve(), *start.resolve().parents):
        if (folder / "package.json").is_file():
            return folder
    raise pytest.UsageError(f"No package.json at or above {start}: run the tests inside a plugin folder "
                            f"or set {ROOT_ENV}.")


class PluginUnderTest:
    """One plugin folder served by a real host on a temporary data root."""

    def __init__(self, folder: Path, home: Path) -> None:
        from .app import App
        from .paths import DataRoot
        from .plugins.dev import DevSession

        self.folder = folder
        self.recorder = Recorder()
        self.reports: list[Report] = []
        self.written_threads: list[dict[str, Any]] = []
        self.output: list[str] = []
        self.app: App = App(DataRoot(home))
        self.app.plugin_code.frontend = self.recorder
        self._session: DevSession = DevSession(self.app, folder, out=self.output.append)
        record = self._session.start()
        self.name = record.key
        problems = [d.summary for d in record.diagnostics if d.level == "error"]
        problems += [f"{e.path}: {e.reason}" for e in record.extensions if e.status == "failed"]
        if problems:
            self.close()
            raise PluginCallFailed(f"{self.name} did not load:\n" + "\n".join(problems))

    # -- what was recorded ------------------------------------------------------------------
    @property
    def notifications(self) -> list[tuple[str, str]]:
        return self.recorder.notifications

    @property
    def links(self) -> list[str]:
        return self.recorder.links

    @property
    def host_commands(self) -> list[tuple[str, Any]]:
        return self.recorder.host_commands

    @property
    def workspace(self) -> Path:
        return self.app.root.workspace

    # -- calls -----------------------------------------------------------------------------
    def set_settings(self, values: dict[str, Any]) -> None:
        """Save settings as the settings form would (validated against config.schema.json)."""
        _record, problems = self.app.plugins.apply_settings(self.name, list(values.items()))
        if problems:
            raise ValueError("; ".join(problems))

    def tool(self, ident: str, arguments: dict[str, Any] | None = None, *, thread: dict[str, Any] | None = None,
             variables: dict[str, str] | None = None, timeout: float = TIMEOUT) -> Any:
        """Call tool `ident` (its file stem or model-facing name); its value."""
        from .plugins.hosts.host import CallFailed

        self.app.plugin_code.ensure_loaded(self.name)  # again after a settings change reloaded it
        spec = next((s for s in self.app.plugin_code.tool_specs()
                     if s.ref.plugin == self.name and ident in (s.ref.id, s.name)), None)
        if spec is None:
            raise PluginCallFailed(f"{self.name} has no active tool {ident!r}")
        context = {"thread": thread or {}, "variables": variables or {}}
        try:
            answer = self.app.plugin_code.call(self.name, spec.ref.runtime, "tool", spec.ref.id, "execute",
                                               {"arguments": arguments or {}}, context, timeout=timeout, cancel=None)
        except CallFailed as exc:
            raise PluginCallFailed(exc.message + (f"\n{exc.stack}" if exc.stack else "")) from None
        return answer.get("result") if answer.get("type") == "result" else answer.get("value")

    def command(self, ident: str, arguments: Sequence[str] = (), *, thread: dict[str, Any] | None = None,
                filename: str = "test-thread.json", timeout: float = TIMEOUT) -> CommandOutcome:
        """Run command `ident` (its file stem); with `thread` that thread is the active tab."""
        from .core.threadio import thread_from_data, thread_to_data
        from .plugins.code.calls import ActiveTab

        self.app.plugin_code.ensure_loaded(self.name)
        found = next((c for c in self.app.plugin_code.commands()
                      if c.ref.plugin == self.name and c.ref.id == ident), None)
        if found is None:
            raise PluginCallFailed(f"{self.name} has no active command {ident!r}")

        def commit(written: Thread) -> str | None:
            self.written_threads.append(thread_to_data(written))
            return None

        tab = ActiveTab(filename, thread_from_data(thread), commit) if thread is not None else None
        return found.invoke(list(arguments), active_tab=tab, on_report=self.reports.append, timeout=timeout)

    def close(self) -> None:
        try:
            self._session.stop()
        finally:
            self.app.close()


@dataclass
class ScriptedAnswer:
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


class ModelServer:
    """A loopback Chat Completions server (`url` is its base, `…/v1`): each request gets the
    next scripted answer (`answer(text)`), streamed when the request asks for it; the
    requests are kept in `requests`."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._answers: list[ScriptedAnswer] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                answer = server._next(body)
                message: dict[str, Any] = {"role": "assistant", "content": answer.text}
                if answer.tool_calls:
                    message["tool_calls"] = answer.tool_calls
                finish = "tool_calls" if answer.tool_calls else "stop"
                if not body.get("stream"):
                    self._json(200, {"id": "c1", "object": "chat.completion", "model": body.get("model", "scripted"),
                                     "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                                     "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                delta = {k: v for k, v in message.items() if k != "role"}
                for chunk in ({"role": "assistant"}, delta):
                    data = {"id": "c1", "object": "chat.completion.chunk",
                            "choices": [{"index": 0, "delta": chunk, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
                end = {"id": "c1", "object": "chat.completion.chunk",
                       "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
                self.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())

            def _json(self, status: int, value: Any) -> None:
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, name="plugin-test-model", daemon=True)
        self._thread.start()

    def answer(self, text: str = "", tool_calls: list[dict[str, Any]] | None = None) -> None:
        """Script the next answer."""
        with self._lock:
            self._answers.append(ScriptedAnswer(text, list(tool_calls or [])))

    def _next(self, body: dict[str, Any]) -> ScriptedAnswer:
        with self._lock:
            self.requests.append(body)
            return self._answers.pop(0) if self._answers else ScriptedAnswer("(no scripted answer left)")

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def plugin_root(request: pytest.FixtureRequest) -> Path:
    return find_plugin_root(Path(str(request.path)).parent)


@pytest.fixture
def plugin(plugin_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginUnderTest]:
    home = tmp_path / "llm-space-home"
    home.mkdir()
    monkeypatch.setenv("LLM_SPACE_HOME", str(home))
    under_test = PluginUnderTest(plugin_root, home)
    yield under_test
    under_test.close()


@pytest.fixture
def plugin_workspace(plugin: PluginUnderTest) -> Path:
    return plugin.workspace


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    server = ModelServer()
    yield server
    server.close()

"""Acceptance: a model API registered on the app's `apis` registry (as a plugin will register
one) with a provider in models.json that uses it runs from `llmspace run` and from the GUI's
run presenter — no existing module knows its name."""

from __future__ import annotations

import json
import queue
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from llmspace import cli
from llmspace.app import App
from llmspace.cancel import CancelToken
from llmspace.core.threadio import parse_thread, serialize_thread, thread_from_data
from llmspace.presenters.editor import EditorPresenter
from llmspace.presenters.run import RunPresenter
from llmspace.providers.base import AdapterContext, ModelApi, ModelRequest
from llmspace.providers.events import Finish, StreamEvent, TextDelta, UsageEvent
from llmspace.registry import plugin_source

API = "echo-test"


class EchoAdapter:
    """Answers every request with the text of its last message."""

    api = API

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        yield TextDelta(f"echo: {request.messages[-1].text}")
        yield UsageEvent(input=3, output=2)
        yield Finish("stop")


def _register_echo(app: App) -> list[AdapterContext]:
    contexts: list[AdapterContext] = []

    def create(context: AdapterContext) -> EchoAdapter:
        contexts.append(context)
        return EchoAdapter()

    app.registries.apis.register(API, ModelApi(create=create), source=plugin_source("echo-plugin"))
    return contexts


def _write_models(home: Path) -> None:
    path = home / "settings" / "models.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "providers": [{"id": "echo", "name": "Echo", "baseUrl": "echo://local", "api": API,
                       "models": [{"id": "echo-1", "name": "Echo 1"}]}],
        "defaultModel": {"provider": "echo", "id": "echo-1"},
    }), encoding="utf-8")


def _thread_data(text: str) -> dict[str, Any]:
    return {"title": "echo", "context": {"messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": text}]}]}}


def test_llmspace_run_runs_a_thread_on_a_registered_api(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    _write_models(home)
    path = home / "workspace" / "echo.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(serialize_thread(thread_from_data(_thread_data("ping"))))
    app = App.from_env()
    contexts = _register_echo(app)
    monkeypatch.setattr(App, "from_env", classmethod(lambda cls: app))  # the CLI builds this app

    code = cli.main(["run", "echo.json"])

    out = capsys.readouterr()
    assert code == 0, out.err
    assert "echo: ping" in out.out
    saved = parse_thread(path.read_bytes())
    assert saved.messages[-1].text() == "echo: ping"
    assert saved.runHistory and saved.runHistory[-1].thread.model is not None
    assert saved.runHistory[-1].thread.model.provider == "echo"
    assert contexts and contexts[0].thread is not None  # the factory was given the run's thread
    traces = list((home / "traces" / "calls").glob("*-echo-echo-1-*.json"))
    assert len(traces) == 1  # traced by default: the API declared nothing else
    trace = json.loads(traces[0].read_text("utf-8"))
    assert trace["api"] == API and trace["request"] is None  # no payload builder declared


class _Pump:
    """The UI pump's role for the presenter: workers post, this thread drains."""

    def __init__(self) -> None:
        self.q: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...]]] = queue.SimpleQueue()

    def post(self, fn: Callable[..., Any], *args: Any) -> None:
        self.q.put((fn, args))

    def post_text(self, key: Any, text: str, sink: Callable[[str], Any]) -> None:
        self.q.put((sink, (text,)))

    def drain_until(self, cond: Callable[[], bool], timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > deadline:
                raise AssertionError("condition not met in time")
            try:
                fn, args = self.q.get(timeout=0.05)
            except queue.Empty:
                continue
            fn(*args)


def test_the_gui_run_path_runs_a_thread_on_a_registered_api(app: App, home: Path) -> None:
    _write_models(home)
    _register_echo(app)
    rel = app.workspace.create_thread("", "echo")
    editor = EditorPresenter(app.workspace, rel)
    editor.message_intents.set_message_text(0, "hello GUI")
    run = RunPresenter(editor, app)
    pump = _Pump()

    run.start(pump.post, pump.post_text)
    pump.drain_until(lambda: run.status != "running")

    assert run.status == "idle", run.error
    assert editor.messages[-1].role == "assistant"
    assert editor.messages[-1].text() == "echo: hello GUI"
    assert editor.thread.runHistory


def test_without_the_registration_the_run_fails_naming_the_missing_api(app: App, home: Path) -> None:
    _write_models(home)
    result = app.runner.run(thread_from_data(_thread_data("ping")))
    assert result.status == "failed"
    assert f"No model API {API!r}" in (result.error or "")

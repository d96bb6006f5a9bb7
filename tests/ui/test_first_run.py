"""The first-run sheet in a real window, with mouse clicks and key presses: Run with no usable
model opens it; Escape changes nothing; the default model downloads from a loopback Hub mirror
with visible progress, Cancel keeps the part downloaded and the next click resumes it with a
Range request; a GGUF file picked in the sheet (the 0.5B model) runs the example thread to a
streamed reply on the built-in engine; a detected local server's button makes its first model the
thread's and Run streams its reply; while `make run` still builds the engine in the background the
sheet says how long is left and opens the local choices once the build is done."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmspace.core.model import ModelConfig, ModelParams
from llmspace.local import build_status, catalog, engine
from llmspace.paths import DataRoot
from llmspace.ui.first_run import FirstRunSheet
from tests.local.gguf import gguf_bytes
from tests.support.hf_hub import FakeHub

from .conftest import pump_until

MB = 1000 * 1000
REPO = "acme/Tiny-GGUF"
FILE = "tiny.Q4_K_M.gguf"


def click(root: Any, widget: Any) -> None:
    """Press and release the left button in the middle of `widget`, as the user clicks."""
    root.update()
    x, y = widget.winfo_width() // 2, widget.winfo_height() // 2
    widget.event_generate("<Enter>", x=x, y=y)
    widget.event_generate("<ButtonPress-1>", x=x, y=y)
    widget.event_generate("<ButtonRelease-1>", x=x, y=y)
    root.update()


def sheet_of(root: Any) -> FirstRunSheet | None:
    """The open first-run sheet once it has drawn its choices for the probed local servers (the
    probe's answer redraws them: a button taken before it was a destroyed widget by the click)."""
    return next((w for w in root.winfo_children()
                 if isinstance(w, FirstRunSheet) and w.winfo_exists() and w.servers is not None), None)


def settled(window: Any, sheet: FirstRunSheet) -> FirstRunSheet:
    """`sheet` after the local-server probe's redraw (see sheet_of)."""
    pump_until(window.root, lambda: sheet.servers is not None, timeout=60)
    return sheet


def open_thread(window: Any, stem: str = "chat", example: str | None = None) -> Any:
    rel = window.starter.example(example) if example else window.app.workspace.create_thread("", stem)
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    window.root.update()
    if example is None:
        ed.list.order[0].text.insert("1.0", "Hello?")
    window.root.update()
    return ed


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeHub]:
    server = FakeHub()
    monkeypatch.setenv("HF_ENDPOINT", server.endpoint)  # read at call time by llmspace/local/download.py
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    yield server
    server.close()


def test_run_with_no_model_opens_the_sheet_and_escape_changes_nothing(window, app, home):
    ed = open_thread(window)
    click(window.root, ed.header.run_btn)
    sheet = pump_until(window.root, lambda: sheet_of(window.root))
    kinds = [o.kind for o in sheet.options]
    assert kinds[0] == "download" and "gguf" in kinds and kinds[-1] == "key"
    assert catalog.default_entry().licence in sheet.options[0].detail
    assert ed.run.status != "running"
    sheet.focus_force()
    window.root.update()
    sheet.event_generate("<Escape>")
    pump_until(window.root, lambda: not sheet.winfo_exists())
    assert app.models.default_model is None
    assert ed.p.thread.model is None
    assert not (home / "models").exists() or not any((home / "models").rglob("*.incomplete"))


def test_the_default_model_downloads_with_progress_cancel_keeps_the_part_and_a_click_resumes(
        window, app, home, hub, monkeypatch):
    data = gguf_bytes(padding=6 * MB)
    sha = hub.add(REPO, FILE, data).etag
    tiny = catalog.CatalogEntry(name="tiny", repo=REPO, file=FILE, revision="main", size=len(data),
                                licence="MIT", context_window=2048, sha256=sha, default=True)
    monkeypatch.setattr(catalog, "CATALOG", (tiny,))
    hub.stall_after = 3 * MB
    ed = open_thread(window)
    chosen: list[bool] = []
    sheet = settled(window, FirstRunSheet(window.ui, app, ed.p, on_chosen=lambda: chosen.append(True)))
    window.root.update()
    assert sheet.options[0].kind == "download" and "(6.0 MB)" in sheet.options[0].label
    click(window.root, sheet.button("download"))
    pump_until(window.root, lambda: hub.stalled.is_set() and "of 6.0 MB" in sheet.progress_text.cget("text"),
               timeout=120)
    assert 0 < sheet.progress.get() < 1
    assert sheet.bar.winfo_ismapped()
    click(window.root, sheet.cancel_button)  # cancels the download, keeps the sheet
    assert "cancelled" in sheet.progress_text.cget("text")
    assert sheet.winfo_exists()
    hub.release.set()
    pump_until(window.root, lambda: sheet.worker is not None and sheet.worker.done(), timeout=120)
    partial = next((home / "models").rglob("*.incomplete"))
    kept = partial.stat().st_size
    assert 0 < kept < len(data)
    assert app.models.default_model is None and not chosen
    hub.stall_after = None
    gets_before = len(hub.gets())
    click(window.root, sheet.button("download"))
    pump_until(window.root, lambda: not sheet.winfo_exists(), timeout=120)
    resumed = hub.gets()[gets_before:]
    assert any(g.headers.get("range") == f"bytes={kept}-" for g in resumed)
    assert chosen == [True]
    assert (app.models.default_model.provider, app.models.default_model.id) == ("local", "tiny")
    assert (ed.p.thread.model.provider, ed.p.thread.model.id) == ("local", "tiny")
    installed = next((home / "models").rglob(FILE))
    assert hashlib.sha256(installed.read_bytes()).hexdigest() == sha


def test_a_gguf_file_picked_in_the_sheet_runs_the_example_thread_to_a_streamed_reply(window, app, home):
    from llmspace.local.engine_settings import EngineSettings, save
    from tests.local.engine_support import QWEN, THREADS, model_file, need_engine

    path = model_file(QWEN)
    need_engine()
    save(DataRoot(home), EngineSettings(threads=THREADS))
    try:
        ed = open_thread(window, example="general-agent")  # its prompt, tools and message as they are
        # a saved model that cannot run (so Run opens the sheet) whose parameters the choice
        # keeps: temperature 0 for a reproducible reply, bounded for a busy 2-core machine
        ed.p.thread.model = ModelConfig(provider="local", id="not-installed",
                                        params=ModelParams(temperature=0, maxTokens=160))
        window.root.update()
        click(window.root, ed.header.run_btn)
        sheet = pump_until(window.root, lambda: sheet_of(window.root))
        window.ui.dialogs.files = [str(path)]
        click(window.root, sheet.button("gguf"))
        pump_until(window.root, lambda: not sheet.winfo_exists(), timeout=120)
        assert (ed.p.thread.model.provider, ed.p.thread.model.id) == ("local", "qwen2.5-coder-0.5b")
        pump_until(window.root, lambda: ed.run.status == "running", timeout=30)
        seen: list[tuple[str, tuple[tuple[str, str], ...]]] = []

        def reply() -> bool:
            last = ed.p.messages[-1]
            if last.role == "assistant":
                calls = tuple((c.input.name, c.input.partialArguments or json.dumps(c.input.arguments))
                              for c in last.toolCalls or [])
                if last.text() or calls:
                    seen.append((last.text(), calls))
            return ed.run.status != "running"

        pump_until(window.root, reply, timeout=300)
        assert not ed.run.error, ed.run.error
        last = ed.p.messages[-1]
        assert last.role == "assistant" and (last.text().strip() or last.toolCalls), last
        # the example's question is answered with a tool call (the 0.5B model's own made-up
        # tool asked again, constrained to the offered ones) or with text: either streams
        assert len(set(seen)) >= 2, f"the reply did not stream (seen only whole): {seen[-1:]}"
    finally:
        engine.stop_engine(DataRoot(home))


def test_the_welcome_pages_configure_models_opens_the_sheet_while_no_model_can_run(window, app):
    window.root.update()
    assert window.welcome.btn_models.winfo_ismapped()
    click(window.root, window.welcome.btn_models)
    sheet = pump_until(window.root, lambda: sheet_of(window.root))
    assert sheet.thread is None and sheet.options[0].kind == "download"
    click(window.root, sheet.cancel_button)
    pump_until(window.root, lambda: not sheet.winfo_exists())
    assert app.models.default_model is None


def test_an_api_key_typed_in_the_sheet_is_saved_and_its_providers_model_becomes_the_threads(window, app, monkeypatch):
    for names in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(names, raising=False)
    ed = open_thread(window)
    sheet = settled(window, FirstRunSheet(window.ui, app, ed.p))
    window.root.update()
    click(window.root, sheet.button("key"))
    entry = sheet.key_entry
    entry.focus_force()  # no window manager here: the X focus follows the sheet as on a desktop
    pump_until(window.root, lambda: sheet.focus_get() is entry)
    for ch in "sk-test":
        entry.event_generate("<KeyPress>", keysym={"-": "minus"}.get(ch, ch))
    entry.event_generate("<Return>")
    pump_until(window.root, lambda: not sheet.winfo_exists())
    model = ed.p.thread.model
    assert model is not None and app.models.api_key(model.provider) == "sk-test"
    assert (app.models.default_model.provider, app.models.default_model.id) == (model.provider, model.id)


def test_a_detected_server_clicked_in_the_sheet_becomes_the_model_and_runs_the_thread(window, app, home, monkeypatch):
    """A model server found on its port (here an Ollama-shaped loopback server on a random port,
    where the user's settings point the built-in Ollama provider) is one click away: its first
    model becomes the thread's and the default model, and Run goes on to a streamed reply."""
    import functools
    import threading

    from llmspace.jsonio import write_json_atomic
    from llmspace.presenters.welcome import probe_local_servers
    from llmspace.ui import first_run
    from tests.support.llm_server import LoopbackLLM, Turn

    with LoopbackLLM(models=["llama3.2:1b", "qwen2.5:0.5b"]) as srv:
        write_json_atomic(home / "settings" / "models.json",
                          {"providers": [{"id": "ollama", "builtin": True, "baseUrl": srv.base_url}]})
        app.models.reload()
        monkeypatch.setattr(first_run, "probe_local_servers",
                            functools.partial(probe_local_servers, servers=(("ollama", "Ollama", srv.port),)))
        midway = threading.Event()  # the server holds the stream halfway until a partial reply shows
        srv.push(Turn(text="Hello from the detected server.", chunk_size=3, hold_midway=midway))
        ed = open_thread(window)
        click(window.root, ed.header.run_btn)
        sheet = pump_until(window.root, lambda: sheet_of(window.root))
        pump_until(window.root, lambda: any(o.kind == "server" for o in sheet.options), timeout=30)
        (server,) = [o for o in sheet.options if o.kind == "server"]
        assert server.label == f"Use Ollama on port {srv.port}" and srv.base_url in server.detail
        assert ed.run.status != "running"
        click(window.root, sheet.button("server"))
        pump_until(window.root, lambda: not sheet.winfo_exists(), timeout=30)
        assert (ed.p.thread.model.provider, ed.p.thread.model.id) == ("ollama", "llama3.2:1b")
        default = app.models.default_model
        assert default is not None and (default.provider, default.id) == ("ollama", "llama3.2:1b")
        seen: set[str] = set()

        def replied() -> bool:
            last = ed.p.messages[-1]
            if last.role == "assistant" and last.text():
                seen.add(last.text())
                midway.set()
            return last.role == "assistant" and ed.run.status != "running"

        pump_until(window.root, replied, timeout=60)
        assert not ed.run.error, ed.run.error
        assert ed.p.messages[-1].text() == "Hello from the detected server."
        assert len(seen) >= 2, f"the reply did not stream: {seen}"
        (asked,) = [r for r in srv.requests if r.path.endswith("/chat/completions")]
        assert asked.body_json["model"] == "llama3.2:1b" and asked.body_json["stream"] is True


def test_while_make_run_builds_the_engine_the_sheet_says_how_long_and_opens_the_local_choices_when_it_is_ready(
        window, app, monkeypatch, tmp_path):
    """`make run` names the background build's status file (LLMSPACE_ENGINE_BUILD_STATUS); the
    sheet reads it: the time left above the choices, the local ones (they need the engine)
    closed — a click on them does nothing — and the API key open; when the build writes
    `ready` the note goes and the local choices open, in the same sheet."""
    status = tmp_path / "engine-build" / "status.json"
    log = str(tmp_path / "engine-build" / "build.log")
    started = time.time()
    build_status.write(status, build_status.BuildStatus("building", os.getpid(), started, started + 4 * 60 + 50, log,
                                                        percent=40))
    monkeypatch.setenv(build_status.ENV, str(status))
    window.ui.dialogs.files = [str(tmp_path / "model.gguf")]
    ed = open_thread(window)
    sheet = settled(window, FirstRunSheet(window.ui, app, ed.p))
    window.root.update()
    assert sheet.engine_label.cget("text").startswith("The built-in engine is being built (about 5 min left).")
    assert sheet.engine_label.winfo_ismapped()
    assert str(sheet.button("gguf").cget("state")) == "disabled"
    assert str(sheet.button("download").cget("state")) == "disabled"
    assert str(sheet.button("key").cget("state")) == "normal"
    click(window.root, sheet.button("gguf"))
    assert sheet.message.cget("text") == ""  # no "Checking the file…": the choice waits for the engine

    build_status.write(status, build_status.BuildStatus("ready", os.getpid(), started, time.time(), log))
    pump_until(window.root, lambda: str(sheet.button("gguf").cget("state")) == "normal", timeout=60)
    assert sheet.engine_label.cget("text") == ""
    assert str(sheet.button("download").cget("state")) == "normal"
    click(window.root, sheet.cancel_button)
    pump_until(window.root, lambda: not sheet.winfo_exists())


def test_the_welcome_pages_model_hint_wraps_inside_the_page_instead_of_running_off_its_edge(window):
    # with no key and no model the hint names three choices in one long line; it used to be
    # cut at the window's right edge ("use a GGUF file you h")
    welcome = window.welcome
    pump_until(window.root, lambda: welcome.winfo_ismapped())
    hint = "To run a thread, click Configure models: " + "run a model on this computer, " * 12
    welcome.detected.configure(text=hint)
    window.root.update()
    page_right = welcome.winfo_rootx() + welcome.winfo_width()
    pump_until(window.root, lambda: welcome.detected.winfo_rootx() + welcome.detected.winfo_reqwidth() <= page_right)

"""Settings › Local models in a real window with mouse clicks: a catalog model downloads from a
loopback Hub mirror with visible progress (size, speed, time left); Cancel keeps the part; a
new Settings dialog (as after a restart) offers Resume, which continues with a Range request and
installs it; a GGUF file is added in place and removed (its file stays); the engine's line says
port, model and memory, and Stop stops it."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.local import catalog, engine
from llmspace.local.models import LocalModels
from tests.local.gguf import gguf_bytes, write_gguf

from .conftest import pump_until
from .test_first_run import FILE, MB, REPO, click, hub

__all__ = ["hub"]


def local_page(window):
    dialog = window.open_settings()
    page = dialog.local_page
    dialog.nb.select(page)
    window.root.update()
    return dialog, page


def select(root, tree, iid: str) -> None:
    """Click the row `iid` of a tree view."""
    root.update()
    tree.see(iid)
    root.update()
    x, y, w, h = tree.bbox(iid)
    tree.event_generate("<ButtonPress-1>", x=x + w // 2, y=y + h // 2)
    tree.event_generate("<ButtonRelease-1>", x=x + w // 2, y=y + h // 2)
    root.update()


def test_a_download_shows_progress_cancel_keeps_the_part_and_resume_after_a_restart_installs_it(
        window, app, home, hub, monkeypatch):
    data = gguf_bytes(padding=6 * MB)
    sha = hub.add(REPO, FILE, data).etag
    tiny = catalog.CatalogEntry(name="tiny", repo=REPO, file=FILE, revision="main", size=len(data), licence="MIT",
                                context_window=2048, sha256=sha)
    monkeypatch.setattr(catalog, "CATALOG", (*catalog.CATALOG, tiny))
    hub.stall_after = 3 * MB
    dialog, page = local_page(window)
    assert page.catalog.set("qwen2.5-coder-0.5b", "size") == "491.4 MB"
    assert page.engine.cget("text").startswith("Not running") and str(page.stop_button.cget("state")) == "disabled"
    select(window.root, page.catalog, "tiny")
    assert page.download_button.cget("text") == "Download"
    click(window.root, page.download_button)
    pump_until(window.root, lambda: hub.stalled.is_set() and "/s" in page.progress_text.cget("text"), timeout=120)
    text = page.progress_text.cget("text")
    assert "of 6.0 MB" in text and "left" in text, text
    assert 0 < page.progress.get() < 1
    click(window.root, page.cancel_button)
    assert "cancelled" in page.progress_text.cget("text")
    hub.release.set()
    pump_until(window.root, lambda: page.worker is not None and page.worker.done(), timeout=120)
    dialog.destroy()
    window.root.update()
    dialog, page = local_page(window)  # a new page reads what is on disk
    assert page.catalog.set("tiny", "state").startswith("partly downloaded:")
    select(window.root, page.catalog, "tiny")
    assert page.download_button.cget("text") == "Resume"
    kept = LocalModels(app.root).partial_downloads()[0][2]
    hub.stall_after = None
    before = len(hub.gets())
    click(window.root, page.download_button)
    pump_until(window.root, lambda: page.installed.exists("tiny"), timeout=120)
    assert any(g.headers.get("range") == f"bytes={kept}-" for g in hub.gets()[before:])
    assert page.catalog.set("tiny", "state") == "installed"
    assert page.installed.set("tiny", "size") == "6.0 MB"
    assert Path(page.installed.set("tiny", "path")).is_relative_to(home / "models")
    dialog.destroy()


def test_a_gguf_file_is_added_in_place_and_removed_leaving_the_file(window, app, tmp_path):
    gguf = write_gguf(tmp_path / "elsewhere" / "my-model.Q4_K_M.gguf", padding=1000)
    window.ui.dialogs.files = [str(gguf)]
    dialog, page = local_page(window)
    click(window.root, page.add_button)
    name = pump_until(window.root, lambda: next(iter(page.installed.get_children("")), None), timeout=60)
    assert page.installed.set(name, "path") == str(gguf)
    assert page.installed.set(name, "origin").startswith("in place")
    select(window.root, page.installed, name)
    click(window.root, page.remove_button)
    assert window.ui.dialogs.confirms and "stays where it is" in window.ui.dialogs.confirms[-1]
    pump_until(window.root, lambda: not page.installed.get_children(""), timeout=60)  # on the worker pool
    assert gguf.is_file()
    dialog.destroy()


def test_the_engine_line_shows_the_running_engine_and_stop_stops_it(window, app, home):
    from tests.local.engine_support import GEMMA, setup_root

    root, model = setup_root(home, GEMMA, name="gemma")
    try:
        engine.ensure_engine(root, model)
        dialog, page = local_page(window)
        text = page.engine.cget("text")
        status = engine.engine_status(root)
        assert status is not None
        assert text.startswith(f"Running on port {status.port} · model gemma") and "memory" in text, text
        click(window.root, page.stop_button)
        pump_until(window.root, lambda: page.engine.cget("text").startswith("Not running"), timeout=60)
        assert engine.engine_status(root) is None
        dialog.destroy()
    finally:
        engine.stop_engine(root)


def test_removing_the_model_the_engine_has_loaded_warns_it_is_the_default_and_the_engine_line_stops_naming_it(
        window, app, home):
    from tests.local.engine_support import GEMMA, setup_root

    root, model = setup_root(home, GEMMA, name="gemma")
    try:
        app.models.set_default_model("local", "gemma")
        engine.ensure_engine(root, model)
        dialog, page = local_page(window)
        assert "model gemma" in page.engine.cget("text")
        select(window.root, page.installed, "gemma")
        click(window.root, page.remove_button)
        question = window.ui.dialogs.confirms[-1]
        assert "default model" in question and "engine" in question, question
        pump_until(window.root, lambda: not page.installed.exists("gemma") and page.worker is not None
                   and page.worker.done(), timeout=60)
        window.root.update()
        assert "gemma" not in page.engine.cget("text"), page.engine.cget("text")
        assert engine.engine_status(root) is None
        dialog.destroy()
    finally:
        engine.stop_engine(root)


@pytest.fixture(autouse=True)
def _settings_closed(window):
    yield
    for w in window.root.winfo_children():
        if w.winfo_exists() and w.winfo_class() == "Toplevel" and w.title() == "Settings":
            w.destroy()

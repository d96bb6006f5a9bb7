"""A model download against a Hub mirror that is down (HF_ENDPOINT at a loopback port nobody
listens on), in a real window with mouse clicks: the first-run sheet and Settings › Local models
say that the Hub cannot be reached and point at their own GGUF button (not at the command
line), and leave no stale "Starting the download…" line or progress bar behind. Also: the
sheet's progress bar takes a row of its own under the download's description."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from llmspace.local import catalog
from llmspace.ui.first_run import FirstRunSheet
from tests.local.gguf import gguf_bytes

from .conftest import pump_until
from .test_first_run import FILE, MB, REPO, click, hub, open_thread, settled
from .test_local_page import local_page, select

__all__ = ["hub"]


@pytest.fixture
def mirror_down(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    with socket.socket() as sock:  # a port nobody listens on: connections are refused
        sock.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{sock.getsockname()[1]}"
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    tiny = catalog.CatalogEntry(name="tiny", repo=REPO, file=FILE, revision="main", size=6 * MB, licence="MIT",
                                context_window=2048, sha256="0" * 64, default=True)
    monkeypatch.setattr(catalog, "CATALOG", (tiny,))
    return endpoint


def _shown(widget: Any) -> str:
    """The text of a label the user can see ("" when it is not shown)."""
    return str(widget.cget("text")) if widget.winfo_ismapped() else ""


def test_the_first_run_sheet_says_the_hub_is_down_points_at_its_gguf_button_and_leaves_no_stale_status(
        window, app, home, mirror_down):
    ed = open_thread(window)
    sheet = settled(window, FirstRunSheet(window.ui, app, ed.p))
    window.root.update()
    click(window.root, sheet.button("download"))
    pump_until(window.root, lambda: sheet.message.cget("text"), timeout=120)
    message = sheet.message.cget("text")
    assert f"Cannot reach the Hugging Face Hub at {mirror_down}" in message, message
    assert '"Use a GGUF file…"' in message and "llmspace local" not in message, message
    assert _shown(sheet.progress_text) == "", _shown(sheet.progress_text)
    assert not sheet.bar.winfo_ismapped()
    assert str(sheet.button("gguf").cget("state")) == "normal"
    assert app.models.default_model is None
    sheet.destroy()


def test_a_gguf_file_chosen_after_a_cancelled_download_leaves_no_download_line(window, app, home, hub, monkeypatch,
                                                                                 tmp_path):
    data = gguf_bytes(padding=6 * MB)
    sha = hub.add(REPO, FILE, data).etag
    tiny = catalog.CatalogEntry(name="tiny", repo=REPO, file=FILE, revision="main", size=len(data), licence="MIT",
                                context_window=2048, sha256=sha, default=True)
    monkeypatch.setattr(catalog, "CATALOG", (tiny,))
    hub.stall_after = 3 * MB
    ed = open_thread(window)
    sheet = settled(window, FirstRunSheet(window.ui, app, ed.p))
    window.root.update()
    click(window.root, sheet.button("download"))
    pump_until(window.root, lambda: hub.stalled.is_set() and "of 6.0 MB" in sheet.progress_text.cget("text"),
               timeout=120)
    window.root.update_idletasks()
    bar = sheet.bar
    under = [w for w in sheet.body.grid_slaves() if w is not bar and w.winfo_ismapped()
             and w.winfo_y() < bar.winfo_y() + bar.winfo_height() and bar.winfo_y() < w.winfo_y() + w.winfo_height()]
    assert not under, f"the progress bar is drawn over {[w.cget('text') for w in under]}"
    click(window.root, sheet.cancel_button)
    hub.release.set()
    pump_until(window.root, lambda: sheet.worker is not None and sheet.worker.done(), timeout=120)
    not_gguf = tmp_path / "notes.txt"
    not_gguf.write_text("not a model")
    window.ui.dialogs.files = [str(not_gguf)]
    click(window.root, sheet.button("gguf"))
    pump_until(window.root, lambda: sheet.worker is not None and sheet.worker.done() and not sheet.working,
               timeout=120)
    assert sheet.message.cget("text"), "the file's problem is said"
    assert _shown(sheet.progress_text) == "" and not sheet.bar.winfo_ismapped()
    sheet.destroy()


def test_settings_local_models_says_the_hub_is_down_points_at_add_gguf_and_leaves_no_stale_status(
        window, app, home, mirror_down):
    dialog, page = local_page(window)
    select(window.root, page.catalog, "tiny")
    click(window.root, page.download_button)
    pump_until(window.root, lambda: page.msg.cget("text") and page.worker is not None and page.worker.done(),
               timeout=120)
    window.root.update()
    message = page.msg.cget("text")
    assert f"Cannot reach the Hugging Face Hub at {mirror_down}" in message, message
    assert '"Add GGUF file…"' in message and "llmspace local" not in message, message
    assert page.progress_text.cget("text") == "" and page.progress.get() == 0
    assert str(page.download_button.cget("state")) == "normal"
    dialog.destroy()

"""The built-in engine's models as Settings › Local models and the first-run sheet work them,
with no display: a catalog model downloads from a loopback Hub mirror on a worker thread with
its progress as a fraction and a line, Cancel keeps the part and the next download resumes it
with a Range request; a GGUF file is added in place once and removed with a question first;
the engine's line and Stop when nothing runs."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from llmspace.local import catalog
from llmspace.local.download import Progress
from llmspace.paths import DataRoot
from llmspace.presenters import local_models
from llmspace.presenters.local_models import Cancelled, DownloadProgress, LocalModelsPresenter
from tests.local.gguf import gguf_bytes, write_gguf
from tests.support.hf_hub import FakeHub

MB = 1000 * 1000
REPO = "acme/Tiny-GGUF"
FILE = "tiny.Q4_K_M.gguf"


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeHub]:
    server = FakeHub()
    monkeypatch.setenv("HF_ENDPOINT", server.endpoint)  # read at call time by llmspace/local/download.py
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    yield server
    server.release.set()
    server.close()


def test_a_download_reports_progress_cancel_keeps_the_part_and_the_next_download_resumes_and_installs_it(
        home: Path, hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    data = gguf_bytes(padding=6 * MB)
    sha = hub.add(REPO, FILE, data).etag
    tiny = catalog.CatalogEntry(name="tiny", repo=REPO, file=FILE, revision="main", size=len(data), licence="MIT",
                                context_window=2048, sha256=sha)
    monkeypatch.setattr(catalog, "CATALOG", (*catalog.CATALOG, tiny))
    models = LocalModelsPresenter(DataRoot(home))
    row = models.catalog_row("tiny")
    assert row is not None and (row.state, row.action) == ("not downloaded", "Download")
    hub.stall_after = 3 * MB
    seen: list[DownloadProgress] = []
    notes: list[str] = []
    halfway = threading.Event()

    def on_progress(p: DownloadProgress) -> None:
        seen.append(p)
        if "/s" in p.text:
            halfway.set()

    job = models.download("tiny", "Add GGUF file…")
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(job.run, on_progress, notes.append)
        assert hub.stalled.wait(120) and halfway.wait(120), f"no progress: {seen}"
        assert 0 < seen[-1].fraction < 1 and "of 6.0 MB" in seen[-1].text and "left" in seen[-1].text, seen[-1]
        job.cancel()
        assert job.cancelled
        hub.release.set()
        with pytest.raises(Cancelled):
            first.result(timeout=120)
    assert any("SHA-256" in n for n in notes), notes
    row = models.catalog_row("tiny")
    assert row is not None and row.action == "Resume" and row.state.startswith("partly downloaded:"), row
    kept = next((home / "models").rglob("*.incomplete")).stat().st_size
    assert 0 < kept < len(data)

    hub.stall_after = None
    before = len(hub.gets())
    model, already = models.download("tiny", "Add GGUF file…").run()
    assert not already and model.name == "tiny" and model.size == len(data)
    assert any(g.headers.get("range") == f"bytes={kept}-" for g in hub.gets()[before:])
    listing = models.listing()
    assert [r.state for r in listing.catalog if r.name == "tiny"] == ["installed"]
    assert [(r.name, r.size) for r in listing.installed] == [("tiny", "6.0 MB")]


def test_a_gguf_file_is_added_in_place_once_and_removing_it_asks_first_and_keeps_the_file(
        home: Path, tmp_path: Path) -> None:
    gguf = write_gguf(tmp_path / "elsewhere" / "my-model.Q4_K_M.gguf", padding=1000)
    models = LocalModelsPresenter(DataRoot(home))
    added = models.add_file(str(gguf))
    assert added.path == gguf and added.origin == "in-place"
    assert models.add_file(str(gguf), reuse=True) == added  # the first-run sheet picks the same file again
    question = models.removal_question(added.name)
    assert question == f"Remove the model {added.name}? Its file stays where it is ({gguf})."
    models.remove(added.name)
    assert models.listing().installed == [] and gguf.is_file()
    assert models.removal_question(added.name) is None


def test_with_no_engine_running_the_listing_says_so_and_stop_finds_nothing_to_stop(home: Path) -> None:
    models = LocalModelsPresenter(DataRoot(home))
    listing = models.listing()
    assert listing.engine.startswith("Not running") and not listing.engine_running and listing.problem == ""
    assert models.stop_engine() is False


def test_progress_text_says_size_speed_and_time_left() -> None:
    text = local_models.progress_text(Progress(done=120_000_000, total=491_400_064, speed=4_200_000, eta=88.4,
                                               resumed_from=0))
    assert text == "120.0 MB of 491.4 MB (24%) · 4.2 MB/s · 1 min 28 s left"
    assert "resumed at 50.0 MB" in local_models.progress_text(Progress(60_000_000, 100_000_000, 0, None, 50_000_000))
    assert local_models.download_progress(Progress(0, 0, 0, None, 0)).fraction == 0.0


def test_a_cancelled_listener_stops_at_the_next_chunk() -> None:
    seen: list[int] = []
    stop = [False]
    listener = local_models.CancellableListener(lambda p: seen.append(p.done), lambda _t: None, lambda: stop[0])
    listener.progress(Progress(1, 10, 1.0, 9.0, 0))
    stop[0] = True
    with pytest.raises(Cancelled):
        listener.progress(Progress(2, 10, 1.0, 8.0, 0))
    assert seen == [1]

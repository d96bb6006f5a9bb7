"""Settings › Local models rows and the engine's status line (no Tk)."""

from __future__ import annotations

from pathlib import Path

from llmspace.local import catalog
from llmspace.local.engine import EngineStatus
from llmspace.local.models import InstalledModel
from llmspace.presenters import local_page


def test_catalog_rows_say_installed_resume_or_download() -> None:
    small, big = catalog.CATALOG[0], catalog.CATALOG[1]
    have = InstalledModel(name="mine", path=Path("/x/a.gguf"), size=1, origin="in-place", sha256=small.sha256 or "")
    rows = local_page.catalog_rows(catalog.CATALOG, [have], [(big.repo, Path("/m/blobs/e.incomplete"), 12_000_000)])
    assert (rows[0].state, rows[0].action) == ("installed", "")
    assert rows[1].action == "Resume" and rows[1].state == "partly downloaded: 12.0 MB of 1.1 GB"
    assert [r.action for r in local_page.catalog_rows(catalog.CATALOG, [], [])] == ["Download", "Download"]
    assert rows[0].size == "491.4 MB" and rows[0].licence == "Apache-2.0"


def test_installed_rows_say_size_origin_and_where_the_file_lives() -> None:
    m = InstalledModel(name="q", path=Path("/data/q.gguf"), size=491_400_064, origin="in-place", sha256="0" * 64)
    assert local_page.installed_rows([m]) == [
        local_page.InstalledRow("q", "491.4 MB", "in place (kept)", "/data/q.gguf")]


def test_the_engine_line_says_port_model_memory_and_idle_time() -> None:
    s = EngineStatus(pid=1, port=41234, model_name="q", model_path="/q.gguf", rss_bytes=612_000_000, started_at=0.0,
                     last_used=1000.0, supervisor_pid=2, context_size=4096, idle_seconds=600)
    assert local_page.engine_text(s, now=1150.0) == "Running on port 41234 · model q · 612.0 MB memory · idle 2 min"
    assert local_page.engine_text(None).startswith("Not running")

"""The first-run sheet's choices, progress text and what a choice changes (no Tk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.errors import UserFacingError
from llmspace.local import catalog
from llmspace.local.download import Progress
from llmspace.local.models import InstalledModel
from llmspace.presenters import first_run
from llmspace.presenters.welcome import LocalServer


def _installed(name: str) -> InstalledModel:
    return InstalledModel(name=name, path=Path(f"/m/{name}.gguf"), size=491_400_064, origin="in-place", sha256="0" * 64)


def test_with_nothing_detected_the_sheet_offers_the_default_download_a_gguf_file_and_a_key() -> None:
    opts = first_run.options(catalog.default_entry(), [], [], [])
    assert [o.kind for o in opts] == ["download", "gguf", "key"]
    assert "491.4 MB" in opts[0].label and "Apache-2.0" in opts[0].detail
    assert opts[0].provider == "local" and opts[0].model == catalog.default_entry().name


def test_an_installed_default_model_replaces_the_download_and_detected_servers_and_keys_are_offered() -> None:
    servers = [LocalServer("ollama", "Ollama", 11434, "http://127.0.0.1:11434/v1"),
               LocalServer("lmstudio", "LM Studio", 1234, "http://127.0.0.1:1234/v1")]
    opts = first_run.options(catalog.default_entry(), [_installed(catalog.default_entry().name)], servers,
                             [("openai", "OPENAI_API_KEY")])
    assert [o.kind for o in opts] == ["installed", "gguf", "server", "server", "key"]
    assert [o.provider for o in opts if o.kind == "server"] == ["ollama", "lm-studio"]
    assert "$OPENAI_API_KEY" in opts[-1].detail


def test_progress_text_says_size_speed_and_time_left() -> None:
    text = first_run.progress_text(Progress(done=120_000_000, total=491_400_064, speed=4_200_000, eta=88.4,
                                            resumed_from=0))
    assert text == "120.0 MB of 491.4 MB (24%) · 4.2 MB/s · 1 min 28 s left"
    assert "resumed at 50.0 MB" in first_run.progress_text(Progress(60_000_000, 100_000_000, 0, None, 50_000_000))


def test_a_cancelled_listener_stops_at_the_next_chunk() -> None:
    seen: list[int] = []
    stop = [False]
    listener = first_run.CancellableListener(lambda p: seen.append(p.done), lambda _t: None, lambda: stop[0])
    listener.progress(Progress(1, 10, 1.0, 9.0, 0))
    stop[0] = True
    with pytest.raises(first_run.Cancelled):
        listener.progress(Progress(2, 10, 1.0, 8.0, 0))
    assert seen == [1]


def test_a_choice_becomes_the_default_and_the_threads_model() -> None:
    calls: list[tuple[str, str, str]] = []

    class Settings:
        def set_default_model(self, provider_id: str, model_id: str) -> None:
            calls.append(("default", provider_id, model_id))

    class Thread:
        def set_model(self, provider: str, model_id: str) -> None:
            calls.append(("thread", provider, model_id))

    first_run.adopt(Settings(), Thread(), "local", "qwen2.5-coder-0.5b")
    assert calls == [("default", "local", "qwen2.5-coder-0.5b"), ("thread", "local", "qwen2.5-coder-0.5b")]
    with pytest.raises(UserFacingError):
        first_run.first_server_model([], "Ollama")

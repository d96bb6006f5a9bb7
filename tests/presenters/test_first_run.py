"""The first-run sheet's choices, the engine build it follows and what a choice changes (no Tk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.errors import UserFacingError
from llmspace.local import catalog
from llmspace.local.build_status import BuildStatus
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


def _build(state: str, finish_in: float = 0.0, message: str = "") -> BuildStatus:
    return BuildStatus(state=state, pid=1, started=1_000.0, finish=1_000.0 + finish_in,  # type: ignore[arg-type]
                       log="/c/.cache/engine-build/build.log", message=message)


def test_while_the_engine_builds_the_sheet_says_how_long_and_offers_only_what_runs_without_it() -> None:
    """`make run` shows the window while the engine builds in the background: the local choices
    (a download, an installed model, a GGUF file) need it and wait; a detected server and an
    API key do not."""
    building = _build("building", finish_in=5 * 60 + 10)
    servers = [LocalServer("ollama", "Ollama", 11434, "http://127.0.0.1:11434/v1")]
    opts = first_run.options(catalog.default_entry(), [_installed("mine")], servers, [], engine=building)
    assert {o.kind: o.enabled for o in opts} == {"installed": False, "download": False, "gguf": False,
                                                  "server": True, "key": True}
    note = first_run.engine_note(building, now=1_000.0)
    assert note.startswith("The built-in engine is being built (about 6 min left).")
    assert "a GGUF file" in note and "a local model server or an API key does not" in note
    assert first_run.engine_note(building, now=1_000.0 + 5 * 60 + 30).startswith(
        "The built-in engine is being built (about 1 min left).")


def test_a_ready_engine_or_none_being_built_leaves_every_choice_open_and_says_nothing() -> None:
    for engine in (None, _build("ready")):
        opts = first_run.options(catalog.default_entry(), [], [], [], engine=engine)
        assert all(o.enabled for o in opts)
        assert first_run.engine_note(engine, now=2_000.0) == ""


def test_a_failed_or_stopped_build_says_what_to_do_and_keeps_the_local_choices_closed() -> None:
    failed = first_run.engine_note(_build("failed", message="the build stopped (exit status 2)"), now=2_000.0)
    assert "build failed: the build stopped (exit status 2)" in failed
    assert "/c/.cache/engine-build/build.log" in failed and "make run" in failed
    stopped = first_run.engine_note(_build("stopped"), now=2_000.0)
    assert "stopped before it finished" in stopped and "make run" in stopped
    opts = first_run.options(catalog.default_entry(), [], [], [], engine=_build("stopped"))
    assert [o.kind for o in opts if o.enabled] == ["key"]


def test_the_engine_build_is_read_again_at_each_poll_and_a_change_to_ready_opens_the_local_choices(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import time

    from llmspace.local import build_status
    from llmspace.paths import DataRoot
    from llmspace.presenters.local_models import LocalModelsPresenter

    status = tmp_path / "engine-build" / "status.json"
    now = time.time()
    build_status.write(status, BuildStatus("building", os.getpid(), now, now + 4 * 60 + 50, str(tmp_path / "log")))
    monkeypatch.setenv(build_status.ENV, str(status))
    build = first_run.EngineBuild()
    models = LocalModelsPresenter(DataRoot(home))
    assert build.missing and build.note(now).startswith("The built-in engine is being built (about 5 min left).")
    assert [o.kind for o in first_run.choices(models, [], [], build) if o.enabled] == ["key"]
    assert build.poll() is False  # nothing changed
    build_status.write(status, BuildStatus("ready", os.getpid(), now, time.time(), str(tmp_path / "log")))
    assert build.poll() is True and not build.missing and build.note(time.time()) == ""
    assert all(o.enabled for o in first_run.choices(models, [], [], build))
    assert first_run.choices(models, [], [], build)[0].model == catalog.default_entry().name

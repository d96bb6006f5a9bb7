"""`llmspace local models|add|remove`: GGUF files added in place or copied, listed with the catalog."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from llmspace.cli import main
from llmspace.commands.local import ProgressBar
from llmspace.local import catalog
from llmspace.local.download import Progress
from tests.local.gguf import write_gguf


def test_models_lists_the_catalog_with_its_default_and_says_how_to_get_a_model(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["local", "models"]) == 0
    out = capsys.readouterr().out
    assert "* qwen2.5-coder-0.5b  491.4 MB  32,768   Apache-2.0  100% valid (93% the expected tool), 1/6 spurious" in out  # measured here
    assert "qwen2.5-coder-1.5b  1.1 GB" in out
    assert "not checked against the Hub from here" in out
    assert "No model installed. Get one with `llmspace local pull qwen2.5-coder-0.5b`" in out
    assert "Ollama or LM Studio" in out


def test_a_gguf_added_in_place_is_listed_with_its_size_and_removing_it_keeps_the_file(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_gguf(tmp_path / "Tiny.gguf", padding=1_500_000)
    assert main(["local", "add", str(src)]) == 0
    out = capsys.readouterr().out
    assert f"Added tiny (1.5 MB), in place at {src}." in out and "--provider local --model tiny" in out

    assert main(["local", "models"]) == 0
    listing = capsys.readouterr().out
    assert "Installed (in" in listing and "tiny  1.5 MB  in-place" in listing
    assert main(["local", "models", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["installed"][0]["name"] == "tiny" and data["installed"][0]["size"] == src.stat().st_size
    assert [e["name"] for e in data["catalog"]] == [e.name for e in catalog.CATALOG]

    assert main(["local", "remove", "tiny"]) == 0
    assert "stays where it is" in capsys.readouterr().out and src.exists()


def test_a_copied_gguf_is_deleted_on_remove(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_gguf(tmp_path / "t.gguf", padding=1000)
    assert main(["local", "add", str(src), "--copy", "--name", "mine"]) == 0
    copy = home / "models" / "copied" / "mine.gguf"
    assert copy.read_bytes() == src.read_bytes()
    assert main(["local", "remove", "mine"]) == 0
    assert "deleted 1 file(s) we copied" in capsys.readouterr().out
    assert not copy.exists() and src.exists()


def test_a_file_that_is_not_gguf_is_refused_with_the_reason(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "notes.gguf"
    bad.write_text("hello")
    assert main(["local", "add", str(bad)]) == 1
    assert "is not a GGUF model file" in capsys.readouterr().err


def test_a_copy_that_would_not_fit_on_the_disk_is_refused_before_writing(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_gguf(tmp_path / "t.gguf", padding=1000)
    real = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: real._replace(free=1_000_000))
    assert main(["local", "add", str(src), "--copy"]) == 1
    assert "Not enough free disk" in capsys.readouterr().err
    assert not (home / "models" / "copied").exists() or list((home / "models" / "copied").iterdir()) == []
    assert main(["local", "models", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["installed"] == []


def test_removing_a_model_that_is_not_installed_says_how_to_get_one(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["local", "remove", "nope"]) == 1
    err = capsys.readouterr().err
    assert "No model named 'nope' is installed" in err and "llmspace local add PATH" in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_progress_bar_is_redrawn_in_place_with_size_speed_and_time_left() -> None:
    screen = _Terminal()
    bar = ProgressBar(screen)
    bar.progress(Progress(done=250 * 10**6, total=10**9, speed=5 * 10**6, eta=150.0, resumed_from=0))
    bar.progress(Progress(done=10**9, total=10**9, speed=5 * 10**6, eta=0.0, resumed_from=0))
    first, final = screen.getvalue().split("\r")[1:]
    assert first.startswith("[#######.....................]  25.0%  250.0 MB / 1.0 GB  5.0 MB/s  2 min 30 s left")
    assert final.startswith("[############################] 100.0%  1.0 GB / 1.0 GB") and final.endswith("\n")

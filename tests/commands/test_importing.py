"""`llmspace import`: the target folder is checked before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.cli import main


def test_import_into_an_absolute_folder_is_refused_and_writes_nothing(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "chat.json"
    src.write_text('{"messages": [{"role": "user", "content": "hi"}]}', "utf-8")
    assert main(["import", "--into", str(tmp_path / "abs"), str(src)]) == 1
    assert "absolute path" in capsys.readouterr().err
    assert list((home / "workspace").rglob("*.json")) == [] and not (tmp_path / "abs").exists()

"""`llmspace skills remove-folder` only reports what it really did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.cli import main


def test_removing_a_folder_that_is_not_configured_is_an_error_and_leaves_the_file_alone(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["skills", "add-folder", str(tmp_path / "kept")]) == 0
    settings = home / "settings" / "skills.json"
    before = settings.read_bytes()
    assert main(["skills", "remove-folder", str(tmp_path / "never-added")]) == 1
    err = capsys.readouterr().err
    assert "not a configured skill folder" in err and str(tmp_path / "kept") in err
    assert settings.read_bytes() == before
    assert main(["skills", "remove-folder", str(tmp_path / "kept")]) == 0
    assert str(tmp_path / "kept") not in [e["path"] for e in json.loads(settings.read_text("utf-8"))["discoveryPaths"]]

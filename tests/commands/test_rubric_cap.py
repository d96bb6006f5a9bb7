"""`llmspace rubric add` refuses a 21st rubric and keeps all 20 (a thread holds at most 20 rubrics)."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.cli import main
from llmspace.core.run_verdicts import MAX_RUBRICS, create_rubric
from llmspace.core.threadio import thread_from_data
from llmspace.paths import DataRoot


def test_rubric_add_beyond_twenty_is_refused_with_a_clear_message_and_the_file_is_untouched(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    app = App(DataRoot(home))
    try:
        thread = thread_from_data({"title": "full"})
        for i in range(MAX_RUBRICS):
            create_rubric(thread, f"R{i}", [{"name": "a"}, {"name": "b"}], rubric_id=f"id{i}", now=i)
        rel = app.workspace.create_thread("", "full", thread)
    finally:
        app.close()
    path = home / "workspace" / rel
    before = path.read_bytes()

    assert main(["rubric", "add", rel, "One more", "-c", "a", "-c", "b"]) == 1

    err = capsys.readouterr().err
    assert "already has 20 rubrics" in err and "Delete a rubric" in err
    assert path.read_bytes() == before

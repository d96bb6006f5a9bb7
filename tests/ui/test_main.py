"""Desktop entry point helpers that need no window."""

from __future__ import annotations

from pathlib import Path


def test_the_app_builds_without_a_log_file_when_the_logs_folder_cannot_be_made(home: Path) -> None:
    from llmspace.ui.main import _build_app

    (home / "logs").write_text("a file where the logs folder should be", "utf-8")
    app = _build_app()
    try:
        assert app.workspace.root.is_dir()
    finally:
        app.close()
    assert (home / "logs").read_text("utf-8").startswith("a file")

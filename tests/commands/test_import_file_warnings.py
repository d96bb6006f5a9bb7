"""`llmspace import` warns, per new thread, which local files its templates and file
variables would read when run (an imported thread is someone else's text)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.cli import main


def test_import_lists_the_local_files_an_imported_thread_would_read(home: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "shared.json"
    src.write_text(json.dumps({"title": "shared", "context": {
        "systemPrompt": "{{@include('/etc/passwd')}} {{ key }}",
        "variables": {"key": {"type": "file", "value": "~/.ssh/id_rsa"}},
        "messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "{{ exists('/proc/self/environ') }}"}]},
                     {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "{{@include('/etc/shadow')}}"}]}],
    }}), "utf-8")
    clean = tmp_path / "clean.json"
    clean.write_text('{"messages": [{"role": "user", "content": "hi {{ name }}"}]}', "utf-8")

    assert main(["import", str(src), str(clean)]) == 0

    out = capsys.readouterr().out
    assert ("  warning: thread shared.json would read these local files when run: ~/.ssh/id_rsa, /etc/passwd; "
            "and check whether these local files exist: /proc/self/environ\n") in out
    assert "/etc/shadow" not in out  # assistant text is never evaluated
    assert out.count("warning:") == 1


def test_import_files_reports_the_warning_in_its_outcome(home: Path, tmp_path: Path) -> None:
    from llmspace.app import App
    from llmspace.core.importers import import_files
    from llmspace.paths import DataRoot

    src = tmp_path / "x.json"
    src.write_text(json.dumps({"title": "x", "context": {"systemPrompt": '{{@include("notes.md")}}'}}), "utf-8")
    app = App(DataRoot(home))
    try:
        outcomes = import_files([src], app.workspace, into="in")
    finally:
        app.close()
    assert outcomes[0].created == ["in/x.json"]
    assert outcomes[0].warnings == ["thread in/x.json would read these local files when run: notes.md"]

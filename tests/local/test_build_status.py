"""The engine build's status file as the app reads it (llmspace/local/build_status.py): only
where `make run` names it, a build whose process is gone reads as stopped, a torn file
reads as none, and the time left follows the compiler's pace once it reports progress."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from llmspace.local import build_status as bs


def test_only_the_file_make_run_names_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(bs.ENV, raising=False)
    assert bs.status_file() is None  # an installed app, the executable, the tests
    monkeypatch.setenv(bs.ENV, str(tmp_path / "status.json"))
    assert bs.status_file() == tmp_path / "status.json"
    assert bs.read(bs.status_file()) is None  # named, not written yet


def test_a_build_whose_process_is_gone_reads_as_stopped_and_a_finished_one_as_it_was(tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    path = tmp_path / "status.json"
    bs.write(path, bs.BuildStatus("building", int(gone.stdout), 100.0, 580.0, "/c/build.log", percent=40))
    assert bs.read(path) == bs.BuildStatus("stopped", int(gone.stdout), 100.0, 580.0, "/c/build.log", percent=40)
    bs.write(path, bs.BuildStatus("installing", os.getpid(), 100.0, 580.0, "/c/build.log", percent=100))
    assert bs.read(path).state == "installing"  # type: ignore[union-attr]
    bs.write(path, bs.BuildStatus("failed", int(gone.stdout), 100.0, 300.0, "/c/build.log", message="exit status 2"))
    assert bs.read(path).message == "exit status 2"  # type: ignore[union-attr]


def test_a_torn_or_foreign_file_reads_as_no_build(tmp_path: Path) -> None:
    path = tmp_path / "status.json"
    for text in ('{"state": "build', '{"state": "cooking", "pid": 1, "started": 1, "finish": 2}', "[]",
                 '{"state": "building", "pid": "1", "started": 1, "finish": 2}'):
        path.write_text(text, "utf-8")
        assert bs.read(path) is None, text


def test_the_time_left_is_the_expected_build_time_until_the_compiler_reports_then_its_pace() -> None:
    # nothing reported: eight minutes from the start, never less than a minute from now
    assert bs.finish_estimate(started=1_000.0, now=1_010.0, first=None, percent=None) == 1_000.0 + bs.EXPECTED_SECONDS
    assert bs.finish_estimate(started=1_000.0, now=1_000.0 + 600, first=None, percent=None) == 1_000.0 + 660
    # 10% → 30% in 100 s: 5 s a percent, 70% to go, then the install
    assert bs.finish_estimate(1_000.0, now=1_200.0, first=(1_100.0, 10), percent=30) == 1_200.0 + 350 + bs.INSTALL_SECONDS
    # too little progress to judge the pace yet
    assert bs.finish_estimate(1_000.0, now=1_200.0, first=(1_100.0, 10), percent=12) == 1_000.0 + bs.EXPECTED_SECONDS
    status = bs.BuildStatus("building", 1, 1_000.0, finish=1_000.0 + 250, log="")
    assert status.minutes_left(1_000.0) == 5
    assert status.minutes_left(1_000.0 + 249) == 1
    assert status.minutes_left(1_000.0 + 900) == 1  # late: still "about 1 min"

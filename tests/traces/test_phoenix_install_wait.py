"""The Phoenix tests wait for the set-up's background install (scripts/setup-test-env.sh starts
it and goes on, so the suite starts meanwhile): while the install's pid is alive they wait, and
take Phoenix once it is installed; an install that failed is named in the skip (or CI's failure)
with the line its state folder holds. Real processes stand in for the install."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.traces import conftest as phoenix_setup

INSTALL = """import pathlib, sys, time
venv = pathlib.Path(sys.argv[1])
time.sleep(1.5)  # pip at work
(venv / "bin").mkdir(parents=True)
(venv / "bin" / "phoenix").write_text("#!/bin/sh\\n")
(venv / ".installed").touch()
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    venv, state = tmp_path / "phoenix-x", tmp_path / "phoenix-x.install"
    state.mkdir()
    monkeypatch.setattr(phoenix_setup, "PHOENIX_VENV", venv)
    monkeypatch.setattr(phoenix_setup, "INSTALL_STATE", state)
    monkeypatch.setattr(phoenix_setup, "ROOT", tmp_path)
    return venv, state


def test_a_test_that_needs_phoenix_waits_for_the_install_in_progress_and_then_takes_it(
        cache: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    venv, state = cache
    monkeypatch.setenv("CI", "true")  # not waiting would fail here, not skip
    install = subprocess.Popen([sys.executable, "-c", INSTALL, str(venv)])
    try:
        (state / "pid").write_text(f"{install.pid}\n", encoding="ascii")
        assert phoenix_setup._phoenix_venv_or_skip() == venv / "bin" / "phoenix"
        assert (venv / ".installed").exists()  # it returned only once the install had finished
    finally:
        install.wait(timeout=60)


def test_a_failed_background_install_is_named_in_the_skip(cache: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    _venv, state = cache
    monkeypatch.delenv("CI", raising=False)
    (state / "pid").write_text("999999999\n", encoding="ascii")  # no such process
    (state / "failed").write_text("installing arize-phoenix 20.26.1 failed: see .cache/x/log\n", encoding="utf-8")
    started = time.monotonic()
    with pytest.raises(pytest.skip.Exception) as skipped:
        phoenix_setup._phoenix_venv_or_skip()
    assert time.monotonic() - started < 5  # nothing to wait for
    assert "is not installed in phoenix-x" in str(skipped.value) and "failed: see .cache/x/log" in str(skipped.value)


def test_with_ci_set_a_missing_phoenix_fails_the_test(cache: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"arize-phoenix .* is not installed"):
        phoenix_setup._phoenix_venv_or_skip()

"""The engine line of `llmspace --self-test` (no display): skipped without a model, and a
failure named, not raised, when the model is no file."""

from __future__ import annotations

from pathlib import Path

from llmspace.presenters.self_test import engine_check


def test_without_a_model_the_engine_check_is_skipped_and_says_how_to_run_it() -> None:
    ok, line = engine_check(None)
    assert ok and line.startswith("engine: skipped (") and "--engine-model" in line


def test_a_model_that_is_no_file_fails_the_check_with_what_to_pass(tmp_path: Path) -> None:
    ok, line = engine_check(str(tmp_path / "missing.gguf"))
    assert not ok and line.startswith(f"engine: FAILED ({tmp_path / 'missing.gguf'} is not a file."), line
    assert "--engine-model" in line

"""The three things called "evaluation" have names of their own: run verdicts
(`core/run_verdicts.py`, the thread keys `evaluations` and `evaluationRubrics` as the original
writes them), assertions (`evals/assertions.py`) and dataset evaluations (`evals/`)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_core_holds_run_verdicts_and_no_module_named_after_evaluation():
    core = ROOT / "llmspace" / "core"
    assert sorted(p.name for p in core.glob("eval*.py")) == []
    assert (core / "run_verdicts.py").is_file() and (ROOT / "llmspace" / "evals" / "assertions.py").is_file()


def test_the_architecture_names_the_three_meanings():
    text = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    for name in ("**run verdicts**", "**assertions**", "**dataset evaluations**"):
        assert name in text, name


def test_the_thread_keys_stay_as_the_original_app_writes_them():
    from llmspace.core.model import Thread

    fields = {f.alias or name for name, f in Thread.model_fields.items()}
    assert {"evaluations", "evaluationRubrics"} <= fields

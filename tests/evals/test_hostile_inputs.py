"""`llmspace eval` on hostile or careless inputs (issue 35): YAML aliases that expand a
billion times, regexes that backtrack for ever, results folders and files that are not
ours, datasets outside the evaluation's folder, deep JSON answers, spreadsheet formulas in
outputs, and assertions that need an `expected` the dataset lacks. Real processes, a
loopback model server and real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.cli import main
from tests.evals.support import Oracle, arithmetic_and_extraction, write_eval
from tests.support.limited import billion_laughs_flow, run_limited
from tests.support.llm_server import LoopbackLLM

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def oracle() -> Oracle:
    return Oracle()


@pytest.fixture
def srv(oracle: Oracle):
    with LoopbackLLM() as server:
        server.responder = oracle
        yield server


def _run(*args: str) -> int:
    return main(["eval", "run", *args])


def test_an_evaluation_file_whose_aliases_expand_a_billion_times_exits_2_with_a_clear_error(home, srv):
    path = write_eval(home, srv, arithmetic_and_extraction(2))
    path.write_text(path.read_text("utf-8") + f"description: {billion_laughs_flow()}\nname: *l8\n", encoding="utf-8")

    done = run_limited("", args=["-m", "llmspace", "eval", "run", str(path)], memory_mb=2048, timeout=180,
                       env={"LLM_SPACE_HOME": str(home)})

    assert done.returncode == 2, done.stderr[-1500:]
    assert "quiz.eval.yaml is not valid YAML (its aliases (*name) expand to more than 10,000,000" in done.stderr

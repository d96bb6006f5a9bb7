"""`select-best` and `max-score` with `--executor ray` (issue 42): the cells run as Ray tasks on a
real one-node cluster on this machine (`tests/evals/ray_cluster.py`), and the pass over each
test's outputs runs in the driver process (`llmspace eval run`, a subprocess, as a user runs it),
which asks the loopback judge itself. Skipped with the reason when Ray is not installed (failed
under CI)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from llmspace.evals.journal import read_journal
from tests.evals.ray_cluster import RayCluster, require_ray
from tests.evals.support import Oracle, journal_lines, write_eval
from tests.evals.test_cli_eval import ROOT, _env
from tests.evals.test_compare_outputs import Judge
from tests.support.llm_server import LoopbackLLM, configure_provider

TESTS = [{"description": "bigger", "vars": {"question": "What is 1 + 3?"},
          "assert": [{"type": "regex", "value": "^5$"}, {"type": "select-best", "value": "the larger number"},
                     {"type": "max-score"}]}]


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackLLM]:
    require_ray()
    with LoopbackLLM() as srv:
        yield srv


@pytest.fixture(scope="module")
def cluster(server: LoopbackLLM) -> Iterator[RayCluster]:
    c = RayCluster.start(head_env={"LOOP_API_KEY": "sk-node-key"}, node_env={}, node_resources={},
                         second_node=False, dashboard=False)
    try:
        yield c
    finally:
        c.close()


def test_on_ray_the_driver_compares_a_tests_outputs_after_the_workers_ran_its_cells(home: Path, server, cluster):
    judge = Judge(Oracle())
    server.responder = judge
    path = write_eval(home, server, [], models=("loop/good", "loop/bad"), assertions=[], judge="loop/judge")
    configure_provider(home, server, provider_id="loop", model_id="good", extra_models=["bad", "judge"], api_key="sk-driver")
    (home / "workspace" / "tests.yaml").write_text(yaml.safe_dump(TESTS), encoding="utf-8")

    done = subprocess.run([sys.executable, "-m", "llmspace", "eval", "run", str(path), "--dataset",
                           str(home / "workspace" / "tests.yaml"), "--out", str(home / "out"), "--executor", "ray",
                           "--ray-address", cluster.address, "--no-cache"],
                          cwd=ROOT, env=_env(home), capture_output=True, text=True, timeout=300)

    assert done.returncode == 1, done.stderr  # good loses both comparisons, bad wins both
    assert len(judge.prompts) == 1
    records = journal_lines(read_journal(home / "out" / "journal.jsonl"))
    model = {r["key"]: r["model"] for r in records if r["type"] == "cell"}
    verdicts = sorted((model[r["cell"]], r["judgeModel"], r["check"]["pass"]) for r in records if r["type"] == "judge")
    assert verdicts == [("loop/bad", "loop/judge", True), ("loop/bad", "max-score", True),
                        ("loop/good", "loop/judge", False), ("loop/good", "max-score", False)]
    rows = [json.loads(line) for line in (home / "out" / "results.jsonl").read_text("utf-8").splitlines()]
    assert {r["model"]: r["status"] for r in rows} == {"loop/good": "fail", "loop/bad": "pass"}

"""The gate against noise: when pass/fail is a fair coin whatever the prompt says, a candidate
is promoted at most as often as the gate's α (5 %).

Two parts, because 200 full optimizations take about 15 minutes on this 2-core machine: the gate
(`optimize/gate.py::promote`, the rule `decide` applies) over 200 fixed seeds of simulated
coin-flip held-out pairs (held-out cases are never seen by the search, so the candidate it picked
passes them by a fresh coin); and the whole command against the loopback coin target for a
sample of 10 fixed seeds (at most 2 promotions: a rate of 5 % gives 3 or more about 1 % of the
time, a gate that took any validation gain about half the time). Both report the promotion rate;
the full 200-seed run of the command is in the README's figures."""

from __future__ import annotations

import json
import random
from pathlib import Path

from llmspace.cli import main
from llmspace.optimize.gate import promote
from tests.optimize.support import PromptTask, write_task
from tests.support.llm_server import LoopbackLLM

SEEDS = range(200)
HOLDOUT = 22
REAL_SEEDS = range(10)
REAL_MAX = 2  # of 10: P(3 or more | rate 5 %) is about 1 %; a gate that took any gain would promote about half


def _simulated_run(seed: int) -> bool:
    # whichever candidate the search picked on validation, its held-out coins are new ones
    rng = random.Random(seed)
    a = [rng.random() < 0.5 for _ in range(HOLDOUT)]
    b = [rng.random() < 0.5 for _ in range(HOLDOUT)]
    worse = sum(x and not y for x, y in zip(a, b, strict=True))
    better = sum(y and not x for x, y in zip(a, b, strict=True))
    return promote(worse, better, sum(a), sum(b))


def test_over_200_seeds_of_coin_flip_outcomes_the_gate_promotes_at_most_5_percent(capsys) -> None:
    promoted = sum(_simulated_run(seed) for seed in SEEDS)
    rate = promoted / len(SEEDS)
    with capsys.disabled():
        print(f"\nnoise (simulated, seeds 0-199): promoted {promoted}/200 = {rate:.1%}")
    assert rate <= 0.05


def test_the_command_on_a_coin_flip_target_promotes_at_most_5_percent_of_fixed_seeds(home: Path, srv: LoopbackLLM,
                                                                                      task: PromptTask, capsys) -> None:
    path = write_task(home, srv, model="coin")
    promoted = 0
    for seed in REAL_SEEDS:
        task.seed = seed
        code = main(["optimize", str(path), "--reflector", "loop/reflector", "--seed", str(seed), "--rollouts", "100", "--fresh"])
        assert code in (0, 1)
        promoted += code == 0
    folders = sorted((home / "optimize" / "quiz").iterdir())
    assert len(folders) == len(REAL_SEEDS)
    for folder in folders:
        summary = json.loads((folder / "summary.json").read_text("utf-8"))
        assert summary["verdict"]["promoted"] in (True, False)
    with capsys.disabled():
        print(f"\nnoise (loopback coin target, seeds 0-{len(REAL_SEEDS) - 1}): promoted {promoted}/{len(REAL_SEEDS)}")
    assert promoted <= REAL_MAX

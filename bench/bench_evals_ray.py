"""Ray's overhead for evaluations (`llmspace eval run --executor ray`): the same 2,000-cell
evaluation (500 cases × 2 models × 2 repeats, no cache) against a loopback server, once on the
local pool and once on a local Ray cluster (one head node with 4 CPUs started here with
`ray start`, private temp dir and ports; stopped by killing the processes it started), both at
concurrency 4 (4 tasks run at once on the cluster's 4 CPUs).

Figures: cells per second for each (from planning to the written results; the Ray side
includes joining the cluster and its version check, after a 40-cell warm-up run that starts
its worker processes), and Ray's overhead per cell in ms of wall time. On two cores Ray is not
expected to be faster: the figure is what a cell costs to ship, so a user can judge when a
cluster pays off. Skipped, with the reason, when Ray is not installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CELLS = 2_000
CONCURRENCY = 4


def _child(cells: int, port: int, address: str | None) -> dict[str, Any]:
    from bench.bench_evals import eval_workspace
    from llmspace.app import App
    from llmspace.evals import run as runmod
    from llmspace.evals.spec import load_spec
    from llmspace.paths import DataRoot

    home, ws = eval_workspace("bench-evals-ray-", cells, port)
    app = App(DataRoot(home))
    try:
        spec = load_spec(ws / "bench.eval.yaml").override(executor="ray" if address else "local", ray_address=address)
        app.runner.services.providers.resolve(None, "loop", "m1")
        t0 = time.perf_counter()
        prepared = runmod.prepare(app.runner, spec)
        folder, records, _notes = runmod.open_results(prepared)
        outcome = runmod.run_cells(prepared, folder, records, concurrency=CONCURRENCY, budget=None, use_cache=False)
        seconds = time.perf_counter() - t0
        assert outcome.summary["complete"] and outcome.summary["groups"][0]["passRate"] == 1.0, outcome.summary
    finally:
        app.close()
    return {"seconds": seconds, "cells": prepared.plan.cell_count}


def _run_child(cells: int, port: int, address: str | None) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "bench.bench_evals_ray", str(cells), str(port), address or ""], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        raise RuntimeError(f"the {'Ray' if address else 'local'} run failed: {out.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def run() -> list[tuple[str, float, str, float | None]]:
    try:
        import ray  # noqa: F401
    except ImportError:
        print("bench_evals_ray: skipped — Ray is not installed (pip install 'llmspace[ray]')", file=sys.stderr)
        return []
    from tests.evals.ray_cluster import RayCluster

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen([sys.executable, "-m", "bench.bench_evals", "server"], cwd=ROOT, env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    cluster = None
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        cluster = RayCluster.start({}, {}, {}, head_cpus=CONCURRENCY, second_node=False, dashboard=False)
        local = _run_child(CELLS, port, None)
        _run_child(40, port, cluster.address)  # warm-up: the cluster starts its worker processes
        on_ray = _run_child(CELLS, port, cluster.address)
    finally:
        if cluster is not None:
            cluster.close()
        assert server.stdin is not None
        server.stdin.close()
        server.wait(30)
    overhead_ms = (on_ray["seconds"] - local["seconds"]) / CELLS * 1000
    return [
        (f"evals on Ray: local pool, {CELLS:,} cells, concurrency {CONCURRENCY}", CELLS / local["seconds"], "cells/s", None),
        (f"evals on Ray: local Ray cluster (1 node, {CONCURRENCY} CPUs), same cells", CELLS / on_ray["seconds"], "cells/s", None),
        ("evals on Ray: Ray's overhead per cell (wall)", overhead_ms, "ms", None),
    ]


if __name__ == "__main__":
    print(json.dumps(_child(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] or None)))

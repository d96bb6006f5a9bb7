"""`llmspace eval run --executor ray` on a real two-node Ray cluster on this machine (started by
the module's fixture, `tests/evals/ray_cluster.py`), as a user runs it (a subprocess), against
loopback fake servers: the same results as the local pool, a worker killed with kill -9, the
second node leaving, the driver killed and run again, Ctrl-C, the cluster-wide concurrency
limit, node-local endpoints and resources, and no key in anything Ray keeps or shows.

The head node and the second node each get their own `LLMSPACE_TEST_LLM` (the base URL of
their own fake server) and the key in `LOOP_API_KEY`; the driver's models.json holds another
key, which must never leave it. Skipped with the reason when Ray is not installed (failed
under CI)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmspace.evals.journal import read_journal
from tests.evals.ray_cluster import RayCluster, require_ray
from tests.evals.support import Oracle, arithmetic_and_extraction, is_judge, journal_lines, write_eval
from tests.evals.test_cli_eval import ROOT, CountingOracle, _env, _start, _wait_running
from tests.support.llm_server import LoopbackLLM, configure_provider

NODE_KEY = "sk-node-env-key-7c1e5b2d9a"  # what workers read from their node's environment
DRIVER_KEY = "sk-driver-models-json-4f8a0e3b6c"  # what the driver's models.json holds
STOP_BOUND_S = 15.0  # Ctrl-C to exit, on a loaded 2-core machine ("a few seconds")


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[LoopbackLLM, LoopbackLLM]]:
    require_ray()
    with LoopbackLLM() as head_srv, LoopbackLLM() as node_srv:
        yield head_srv, node_srv


@pytest.fixture(scope="module")
def cluster(servers: tuple[LoopbackLLM, LoopbackLLM]) -> Iterator[RayCluster]:
    head_srv, node_srv = servers
    url = lambda s: s.base_url.removesuffix("/v1")  # noqa: E731
    c = RayCluster.start(head_env={"LOOP_API_KEY": NODE_KEY, "LLMSPACE_TEST_LLM": url(head_srv)},
                         node_env={"LOOP_API_KEY": NODE_KEY, "LLMSPACE_TEST_LLM": url(node_srv)},
                         node_resources={"llmbox": 4})
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def ray_cluster(cluster: RayCluster) -> RayCluster:
    if "node" not in cluster.groups:  # a test before stopped it
        cluster.start_node()
    return cluster


def _fresh(srv: LoopbackLLM, oracle: Oracle) -> Oracle:
    srv.responder = oracle
    srv.requests.clear()
    srv.max_active = 0
    return oracle


def _eval(home: Path, srv: LoopbackLLM, cases: int, **fields: Any) -> Path:
    path = write_eval(home, srv, arithmetic_and_extraction(cases), **fields)
    configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"], api_key=DRIVER_KEY)
    return path


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`llmspace eval ARGS` as a subprocess: the Ray driver is a process of its own, as a user runs it
    (not the test's process, whose environment, Ray connection and logs are not a user's)."""
    return subprocess.run([sys.executable, "-m", "llmspace", "eval", *args], cwd=ROOT, env=_env(home),
                          capture_output=True, text=True, timeout=300)


def _ray(c: RayCluster) -> tuple[str, ...]:
    return ("--executor", "ray", "--ray-address", c.address, "--no-cache")


def _cells(folder: Path) -> list[dict[str, Any]]:
    return [r for r in journal_lines(read_journal(folder / "journal.jsonl")) if r["type"] == "cell"]


def _outcomes(folder: Path) -> dict[str, tuple[Any, ...]]:
    cells = _cells(folder)
    keys = Counter(r["key"] for r in cells)
    assert max(keys.values()) == 1, [k for k, n in keys.items() if n > 1]  # every cell recorded once
    return {r["key"]: (r["output"], r["error"], tuple(c["pass"] for c in r["checks"])) for r in cells}


def _wait_no_cell_workers(c: RayCluster, bound: float = 60) -> None:
    deadline = time.monotonic() + bound
    while c.cell_workers():
        assert time.monotonic() < deadline, "cell tasks still run"
        time.sleep(0.05)  # polling the process table


def test_200_cells_on_ray_give_the_same_journal_keys_and_outcomes_as_the_local_pool(home, ray_cluster, servers):
    srv = servers[0]
    oracle = _fresh(srv, Oracle())
    path = _eval(home, srv, 100, models=["loop/good", "loop/bad"])

    local = _run(home, "run", str(path), "--no-cache", "--out", str(home / "local"))
    on_ray = _run(home, "run", str(path), "--out", str(home / "ray"), *_ray(ray_cluster))

    assert local.returncode == on_ray.returncode == 1, on_ray.stderr  # `bad` is below the threshold
    assert "on Ray (127.0.0.1:" in on_ray.stderr
    ours, theirs = _outcomes(home / "local"), _outcomes(home / "ray")
    assert len(ours) == 200 and ours == theirs
    assert oracle.model_calls("good") + oracle.model_calls("bad") == 400
    summary = lambda d: [(g["label"], g["passed"], g["failed"], g["errors"]) for g in  # noqa: E731
                         json.loads((home / d / "summary.json").read_text("utf-8"))["groups"]]
    assert summary("local") == summary("ray")
    assert read_journal(home / "ray" / "journal.jsonl").finished


class GatedJudgeOracle(Oracle):
    """Judge requests wait until `gate` is set; `blocked` is set once `waiting` of them wait."""

    def __init__(self, waiting: int) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.blocked = threading.Event()
        self.waiting = waiting
        self._count = 0
        self._count_lock = threading.Lock()

    def __call__(self, kind: str, body: Any) -> Any:
        if is_judge(body if isinstance(body, dict) else {}):
            with self._count_lock:
                self._count += 1
                if self._count >= self.waiting:
                    self.blocked.set()
            self.gate.wait(300)
        return super().__call__(kind, body)


def test_a_worker_killed_with_kill_9_mid_run_loses_no_cell_duplicates_none_and_counts_the_lost_paid_call(
        home, ray_cluster, servers):
    srv = servers[0]
    oracle = _fresh(srv, GatedJudgeOracle(waiting=3))  # the cluster runs 3 tasks at once (3 CPUs)
    path = _eval(home, srv, 30, judge="loop/judge", assertions=[{"type": "llm-rubric", "value": "correct"}])
    proc = _start(home, "run", str(path), "--out", str(home / "out"), *_ray(ray_cluster))
    try:
        # every running task has made its paid model call and waits for its judge: kill one
        _wait_running(proc, oracle.blocked, 240, "no cell reached its judge")
        killed = ray_cluster.kill_a_worker()
        oracle.gate.set()
        _out, err = proc.communicate(timeout=600)
    finally:
        oracle.gate.set()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    outcomes = _outcomes(home / "out")  # each cell once
    assert len(outcomes) == 30 and all(error is None for _o, error, _c in outcomes.values())
    records = journal_lines(read_journal(home / "out" / "journal.jsonl"))
    judges = Counter(r["cell"] for r in records if r["type"] == "judge")
    assert len(judges) == 30 and max(judges.values()) == 1
    (retried,) = [r for r in _cells(home / "out") if r.get("attempts", 1) > 1]  # the killed worker's cell, only it
    one_call = (20 * 1.0 + 3 * 2.0) / 1e6
    assert retried["attempts"] == 2, killed
    assert retried["lostCost"] == pytest.approx(one_call) and retried["cost"] == pytest.approx(2 * one_call)
    assert oracle.model_calls("good") == 31  # the lost call was paid for: counted above


def test_the_driver_killed_mid_run_resumes_on_the_next_run_without_repeating_a_journaled_cell(home, ray_cluster, servers):
    srv = servers[0]
    oracle = _fresh(srv, CountingOracle(target=30))
    oracle.delay_per_chunk = 0.03
    path = _eval(home, srv, 60, models=["loop/good", "loop/bad"])
    proc = _start(home, "run", str(path), *_ray(ray_cluster))
    try:
        _wait_running(proc, oracle.reached, 240, "the run never got going")
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(60)
    (folder,) = (home / "evals" / "quiz").iterdir()
    journaled = {r["key"] for r in _cells(folder)}
    assert 0 < len(journaled) < 120
    _wait_no_cell_workers(ray_cluster)  # the dead driver's tasks are gone
    oracle.calls.clear()

    again = _run(home, "run", str(path), *_ray(ray_cluster))

    assert again.returncode == 1, again.stderr
    assert f"Resuming {folder}" in again.stderr
    assert oracle.model_calls("good") + oracle.model_calls("bad") == 120 - len(journaled)
    assert len(_outcomes(folder)) == 120


def test_ctrl_c_cancels_the_outstanding_tasks_and_returns_within_a_few_seconds(home, ray_cluster, servers):
    srv = servers[0]
    oracle = _fresh(srv, CountingOracle(target=10))
    oracle.delay_per_chunk = 0.2
    path = _eval(home, srv, 200)
    proc = _start(home, "run", str(path), *_ray(ray_cluster))
    try:
        _wait_running(proc, oracle.reached, 240, "the run never got going")
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        took = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert took < STOP_BOUND_S, f"took {took:.1f} s to stop"
    assert "Interrupted" in out
    (folder,) = (home / "evals" / "quiz").iterdir()
    assert 0 < len(_outcomes(folder)) < 200
    _wait_no_cell_workers(ray_cluster)  # the cancelled tasks stopped too


def test_the_provider_concurrency_limit_and_429_pauses_hold_across_the_cluster(home, ray_cluster, servers):
    srv = servers[0]
    oracle = _fresh(srv, Oracle())
    oracle.delay_per_chunk = 0.05
    oracle.fail_first = {"good": 2}
    path = _eval(home, srv, 40, concurrency=8, providerConcurrency={"loop": 2})

    done = _run(home, "run", str(path), "--out", str(home / "out"), *_ray(ray_cluster))

    assert done.returncode == 0, done.stderr
    assert 1 <= srv.max_active <= 2, srv.max_active  # 3 tasks run at once on the cluster's 3 CPUs
    assert len(_outcomes(home / "out")) == 40
    assert oracle.fail_first == {"good": 0}


def test_node_local_cells_run_where_the_resource_is_and_call_that_nodes_own_endpoint(home, ray_cluster, servers):
    head_srv, node_srv = servers
    _fresh(head_srv, Oracle())
    node_oracle = _fresh(node_srv, Oracle())
    path = _eval(home, head_srv, 30, models=["near/good"], nodeLocal={"near": {"llmbox": 1}})
    models_json = configure_provider(home, node_srv, provider_id="near", model_id="good", api_key="$LOOP_API_KEY",
                                     make_default=False)
    data = json.loads(models_json.read_text("utf-8"))
    for p in data["providers"]:
        if p["id"] == "near":
            p["baseUrl"] = "${env:LLMSPACE_TEST_LLM}/v1"
    models_json.write_text(json.dumps(data), encoding="utf-8")

    done = subprocess.run([sys.executable, "-m", "llmspace", "eval", "run", str(path), "--out", str(home / "out"),
                           *_ray(ray_cluster)], env={**_env(home), "LOOP_API_KEY": DRIVER_KEY}, capture_output=True,
                          text=True, timeout=600)

    assert done.returncode == 0, done.stderr
    assert node_oracle.model_calls("good") == 30 and len(node_srv.requests) == 30
    assert head_srv.requests == []  # the head node has no llmbox: no cell ran there
    assert len(_outcomes(home / "out")) == 30


def test_no_api_key_appears_in_rays_logs_its_task_list_or_the_runtime_environment(home, ray_cluster, servers):
    srv = servers[0]
    _fresh(srv, Oracle())
    path = _eval(home, srv, 20)

    done = _run(home, "run", str(path), "--out", str(home / "out"), *_ray(ray_cluster))

    assert done.returncode == 0, done.stderr
    assert {r.headers.get("Authorization") for r in srv.requests} == {f"Bearer {NODE_KEY}"}  # the node's key
    for key in (NODE_KEY, DRIVER_KEY):
        leaks = [str(p) for p, data in ray_cluster.logs_text() if key.encode() in data]
        assert leaks == [], f"{key} in {leaks}"
    shown = ""
    for what in ("tasks", "jobs"):
        listed = subprocess.run([str(Path(sys.executable).parent / "ray"), "list", what, "--detail", "--limit", "10000",
                                 "--address", ray_cluster.api_server], capture_output=True, text=True, timeout=300)
        assert listed.returncode == 0, listed.stderr[-2000:]
        shown += listed.stdout
    assert "eval cell add-1|loop/good|default|#1" in shown and "runtime_env" in shown
    assert NODE_KEY not in shown and DRIVER_KEY not in shown


def test_a_ray_client_address_runs_under_the_drivers_budget_and_other_versions_are_refused_at_connect(
        home, ray_cluster, servers, monkeypatch):
    srv = servers[0]
    oracle = _fresh(srv, Oracle())
    one_cell = (20 * 1.0 + 3 * 2.0) / 1e6
    path = _eval(home, srv, 40, budget=round(10.5 * one_cell, 9))

    done = _run(home, "run", str(path), "--out", str(home / "out"), "--executor", "ray", "--ray-address",
                ray_cluster.client_address, "--no-cache")

    assert done.returncode == 2 and "Stopped by the budget" in done.stdout, done.stderr  # cells left unrun
    summary = json.loads((home / "out" / "summary.json").read_text("utf-8"))
    assert summary["stoppedForBudget"] and summary["spentThisRun"] <= 10.5 * one_cell + 1e-12
    assert 1 <= len(_outcomes(home / "out")) == oracle.model_calls("good") <= 10

    import ray

    from llmspace.errors import UserFacingError
    from llmspace.evals import ray_pool

    here = ray_pool.local_versions()
    monkeypatch.setattr(ray_pool, "local_versions", lambda: {**here, "python": "3.11.0", "ray": "2.55.1"})
    try:
        with pytest.raises(UserFacingError) as err:
            ray_pool.connect(ray, ray_cluster.client_address)
    finally:
        ray.shutdown()
    assert f"Ray {here['ray']} there, 2.55.1 here" in str(err.value)
    assert f"Python {here['python']} there, 3.11.0 here" in str(err.value)


OWN_JUDGES = """\
tests:
  - description: the assertion's own judge
    vars: {question: "What is 2 + 3?"}
    assert: [{type: llm-rubric, value: correct, provider: "loop:judge"}]
  - description: the test's options.provider
    vars: {question: "What is 3 + 4?"}
    options: {provider: {id: "loop:chat:judge"}}
    assert: [{type: llm-rubric, value: correct}]
"""


def test_the_assertions_own_judges_grade_on_the_workers_with_or_without_the_evaluations_judge(home, ray_cluster, servers):
    srv = servers[0]
    oracle = _fresh(srv, Oracle())
    ws = home / "workspace"

    def run(name: str, tests: str, **fields: Any) -> tuple[dict[str, str], subprocess.CompletedProcess[str]]:
        path = write_eval(home, srv, [], assertions=[], dataset_name=f"{name}.yaml", **fields)
        configure_provider(home, srv, provider_id="loop", model_id="good", extra_models=["bad", "judge"], api_key=DRIVER_KEY)
        (ws / f"{name}.yaml").write_text(tests, encoding="utf-8")
        done = _run(home, "run", str(path), "--out", str(home / name), *_ray(ray_cluster))
        records = journal_lines(read_journal(home / name / "journal.jsonl"))
        cases = {r["key"]: r["case"] for r in records if r["type"] == "cell"}
        return {cases[r["cell"]]: r["judgeModel"] for r in records if r["type"] == "judge" and r["check"]["pass"]}, done

    only_own, done = run("own", OWN_JUDGES)  # no `judge:` in the evaluation file: the workers had no judge at all

    assert done.returncode == 0, done.stderr
    assert only_own == {"the assertion's own judge": "loop/judge", "the test's options.provider": "loop/judge"}
    mixed_tests = OWN_JUDGES + ("  - description: the evaluation's judge\n    vars: {question: \"What is 1 + 2?\"}\n"
                                "    assert: [{type: llm-rubric, value: correct}]\n")

    mixed, done = run("mixed", mixed_tests, judge="loop/bad")  # the workers had only the evaluation's judge's endpoint

    assert done.returncode == 0, done.stderr
    assert mixed == {"the assertion's own judge": "loop/judge", "the test's options.provider": "loop/judge",
                     "the evaluation's judge": "loop/bad"}
    judged_by: Counter[str] = Counter()
    for (model, prompt), n in oracle.calls.items():
        judged_by[model] += n if prompt.startswith("## Task") else 0
    assert +judged_by == {"judge": 4, "bad": 1}


def test_the_second_node_stopped_mid_run_fails_nothing(home, ray_cluster, servers):
    srv = servers[0]
    oracle = _fresh(srv, CountingOracle(target=20))
    oracle.delay_per_chunk = 0.05
    path = _eval(home, srv, 80)
    proc = _start(home, "run", str(path), "--out", str(home / "out"), *_ray(ray_cluster))
    try:
        _wait_running(proc, oracle.reached, 240, "the run never got going")
        ray_cluster.stop_node()
        _out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    outcomes = _outcomes(home / "out")
    assert len(outcomes) == 80 and all(error is None for _o, error, _c in outcomes.values())

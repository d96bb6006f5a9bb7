"""Evaluation figures (`llmspace eval`): 10,000 cells at concurrency 16 against a loopback server.

- cells per second of `evals.run.run_cells` (journal with fsync per line, assertions, results
  files; no cache), 2,500 cases × 2 models × 2 repeats;
- the same number of requests sent by a bare loop (16 threads, the same HTTP client: a
  `providers.http.new_session()` per call, streaming the body) — the ratio ours / bare and
  our overhead per cell in ms of wall time;
- peak RSS of the evaluation process at 1,000 and at 10,000 cells (each in a fresh process)
  and the growth per cell between them: what remains is the journal records the summary is
  computed from (a few KB per cell);
- a large dataset: `eval new` and a budget-stopped `eval run` (one cell) over a CSV of
  20,000 and of 200,000 rows, each a `llmspace eval` process whose own peak RSS is read
  with wait4: the dataset and the results stream, so the peak stays flat with rows (a bound
  per process and on the growth per row; what grows is the set of ids checked for duplicates).

The loopback server (`tests/support/llm_server.py`) runs in its own process, so its threads
count in neither side. Each side runs in a child process (`python -m bench.bench_evals
child-eval|child-bare N PORT`) printing one JSON line.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONCURRENCY = 16
BIG = 10_000
SMALL = 1_000
LARGE_ROWS = 200_000
FEWER_ROWS = 20_000
LARGE_PEAK_MB = 160  # per process, at 200,000 rows
GROWTH_PER_ROW_BYTES = 150  # the id set, about 100 bytes a row


def _server() -> None:
    from tests.support.llm_server import LoopbackLLM

    srv = LoopbackLLM().start()
    srv._server.socket.listen(256)  # type: ignore[union-attr]  # a deeper backlog than the default 5: 32 clients connect at once
    print(srv.port, flush=True)
    sys.stdin.read()  # until the parent closes stdin
    srv.close()


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def eval_workspace(prefix: str, cells: int, port: int) -> tuple[Path, Path]:
    """A fresh data root whose provider `loop` (models m1, m2) is the loopback server on
    `port`, and its workspace with `bench.json`, `cases.jsonl` (cells / 4 cases) and
    `bench.eval.yaml` (both models, 2 repeats, one `contains` assertion): (home, workspace).
    Shared with bench_evals_ray."""
    from llmspace.core.threadio import serialize_thread, thread_from_data
    from tests.support.llm_server import LoopbackLLM, configure_provider

    home = Path(tempfile.mkdtemp(prefix=prefix))

    class _Fixed(LoopbackLLM):
        @property
        def base_url(self) -> str:
            return f"http://127.0.0.1:{port}/v1"

    configure_provider(home, _Fixed(), provider_id="loop", model_id="m1", extra_models=["m2"])
    ws = home / "workspace"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "bench.json").write_bytes(serialize_thread(thread_from_data(
        {"title": "bench", "context": {"messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "{{q}}"}]}]}})))
    (ws / "cases.jsonl").write_text("".join(json.dumps({"id": f"c{i}", "q": f"question {i}", "expected": "ok"}) + "\n"
                                            for i in range(cells // 4)), encoding="utf-8")
    (ws / "bench.eval.yaml").write_text("thread: bench.json\ndataset: cases.jsonl\nmodels: [loop/m1, loop/m2]\nrepeat: 2\n"
                                        "assert: [{type: contains}]\n", encoding="utf-8")
    return home, ws


def _child_eval(cells: int, port: int) -> dict[str, Any]:
    from llmspace.app import App
    from llmspace.evals import run as runmod
    from llmspace.evals.spec import load_spec
    from llmspace.paths import DataRoot

    home, ws = eval_workspace("bench-evals-", cells, port)
    app = App(DataRoot(home))
    try:
        spec = load_spec(ws / "bench.eval.yaml")
        runner = app.runner  # the app's services are built before timing, as the bare loop has none
        runner.services.providers.resolve(None, "loop", "m1")
        t0 = time.perf_counter()
        prepared = runmod.prepare(app.runner, spec)
        folder, records, _notes = runmod.open_results(prepared)
        outcome = runmod.run_cells(prepared, folder, records, concurrency=CONCURRENCY, budget=None, use_cache=False)
        seconds = time.perf_counter() - t0
        assert outcome.summary["complete"] and outcome.summary["groups"][0]["passRate"] == 1.0, outcome.summary
    finally:
        app.close()
    return {"seconds": seconds, "rss_mb": _rss_mb(), "cells": prepared.plan.cell_count}


def _child_bare(cells: int, port: int) -> dict[str, Any]:
    from llmspace.providers.base import Endpoint, ModelInfo, ModelRequest, NeutralMessage
    from llmspace.providers.http import new_session
    from llmspace.providers.openai_completions import build_payload

    endpoint = Endpoint(provider_id="loop", api="openai-completions", base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-bench")
    info = ModelInfo(id="m1", name="m1", api="openai-completions")
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    lock = threading.Lock()
    left = [cells]

    def worker() -> None:
        while True:
            with lock:
                if left[0] <= 0:
                    return
                left[0] -= 1
                n = left[0]
            request = ModelRequest(endpoint=endpoint, model=info, system_prompt="",
                                   messages=(NeutralMessage(role="user", text=f"question {n // 4}"),))
            payload = build_payload(request)
            with new_session() as session:
                resp = session.post(url, json=payload, headers={"Authorization": "Bearer sk-bench"}, stream=True, timeout=(10, 60))
                for _ in resp.iter_content(None):
                    pass
                resp.close()

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(CONCURRENCY)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"seconds": time.perf_counter() - t0, "rss_mb": _rss_mb(), "cells": cells}


def _child(kind: str, cells: int, port: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "bench.bench_evals", kind, str(cells), str(port)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"{kind} failed: {out.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _cli_peak(home: Path, expect: int, *args: str) -> tuple[float, float]:
    """Run `llmspace eval ARGS` on data root `home`: (seconds, the process's peak RSS in MB)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LLM_SPACE_HOME": str(home)}
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "llmspace", "eval", *args], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=err)
        _pid, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != expect:
            err.seek(0)
            raise RuntimeError(f"eval {args[0]} exited {proc.returncode}: {err.read()[-2000:].decode('utf-8', 'replace')}")
    return seconds, usage.ru_maxrss / 1024


def _large(rows: int, port: int) -> dict[str, float]:
    """`eval new` and a budget-stopped `eval run` (one cell: the loopback answer costs $0.00002)
    over a CSV of `rows` rows."""
    home, ws = eval_workspace("bench-evals-large-", 4, port)
    with (ws / "big.csv").open("w", encoding="utf-8", newline="") as f:
        f.write("id,q,expected\n")
        for i in range(rows):
            f.write(f"c{i},question {i},ok\n")
    new_s, new_mb = _cli_peak(home, 0, "new", "bench.json", "--dataset", str(ws / "big.csv"), "--models", "loop/m1",
                              "-o", str(ws / "big.eval.yaml"))
    run_s, run_mb = _cli_peak(home, 2, "run", str(ws / "big.eval.yaml"), "--budget", "0.00003", "--no-cache")
    return {"new_s": new_s, "new_mb": new_mb, "run_s": run_s, "run_mb": run_mb}


def run() -> list[tuple[str, float, str, float | None]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen([sys.executable, "-m", "bench.bench_evals", "server"], cwd=ROOT, env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        bare = _child("child-bare", BIG, port)
        ours = _child("child-eval", BIG, port)
        small = _child("child-eval", SMALL, port)
        fewer = _large(FEWER_ROWS, port)
        large = _large(LARGE_ROWS, port)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(30)
    ratio = ours["seconds"] / bare["seconds"]
    overhead_ms = (ours["seconds"] - bare["seconds"]) / BIG * 1000
    return [
        (f"evals: cells per second ({BIG:,} cells, concurrency {CONCURRENCY})", BIG / ours["seconds"], "cells/s", None),
        ("evals: bare loop, same requests and HTTP client", BIG / bare["seconds"], "requests/s", None),
        ("evals: wall time ours / bare loop", ratio, "×", 2.0),
        ("evals: overhead per cell (wall)", overhead_ms, "ms", None),
        (f"evals: peak RSS at {SMALL:,} cells", small["rss_mb"], "MB", None),
        (f"evals: peak RSS at {BIG:,} cells", ours["rss_mb"], "MB", None),
        ("evals: RSS growth per cell, 1,000 → 10,000", (ours["rss_mb"] - small["rss_mb"]) * 1024 / (BIG - SMALL), "KB", None),
        (f"evals: eval new over {LARGE_ROWS:,} CSV rows, time", large["new_s"], "s", None),
        (f"evals: eval new over {LARGE_ROWS:,} CSV rows, peak RSS", large["new_mb"], "MB", LARGE_PEAK_MB),
        (f"evals: budget-stopped eval run (1 cell) over {LARGE_ROWS:,} rows, time", large["run_s"], "s", None),
        (f"evals: budget-stopped eval run (1 cell) over {LARGE_ROWS:,} rows, peak RSS", large["run_mb"], "MB", LARGE_PEAK_MB),
        (f"evals: peak RSS growth per row, eval new, {FEWER_ROWS:,} → {LARGE_ROWS:,} rows",
         (large["new_mb"] - fewer["new_mb"]) * 1024 * 1024 / (LARGE_ROWS - FEWER_ROWS), "bytes", GROWTH_PER_ROW_BYTES),
        (f"evals: peak RSS growth per row, budget-stopped run, {FEWER_ROWS:,} → {LARGE_ROWS:,} rows",
         (large["run_mb"] - fewer["run_mb"]) * 1024 * 1024 / (LARGE_ROWS - FEWER_ROWS), "bytes", GROWTH_PER_ROW_BYTES),
    ]


if __name__ == "__main__":
    if sys.argv[1] == "server":
        _server()
    else:
        print(json.dumps((_child_eval if sys.argv[1] == "child-eval" else _child_bare)(int(sys.argv[2]), int(sys.argv[3]))))

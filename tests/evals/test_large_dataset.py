"""A 200,000-row CSV through `llmspace eval new` and a budget-stopped `llmspace eval run`, each a
real subprocess against a loopback server: the dataset is streamed and the results hold the
cells that ran, so each process's peak RSS stays under a bound that holding every row, rendered
request, cell and result row went far over.

The peak is the child's own `VmHWM`, read by the child as it exits: wait4's `ru_maxrss` also
counts the memory the child had before its exec — a copy of the test process (subprocess
starts it with vfork), which late in a full run is itself 400 MB ('eval new peaked at 402 MB'
in a CI run where the same child alone peaks at 64 MB)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import xmlschema

from tests.evals.support import Oracle, write_eval
from tests.support.llm_server import LoopbackLLM

ROOT = Path(__file__).resolve().parents[2]
ROWS = 200_000
PEAK_BOUND_MB = 160  # streamed: about 60 and 76 MB here; every row held: eval new 225 MB, the budget-stopped run 800 MB

pytestmark = pytest.mark.skipif(not hasattr(os, "wait4"), reason="peak RSS of one child needs wait4 (Linux, macOS)")


def _write_csv(path: Path, rows: int) -> None:
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write("id,question,expected\n")
        for i in range(rows):
            f.write(f"case-{i},What is {i} + 1?,{i + 1}\n")


# `llmspace eval ARGS` as `python -m llmspace` runs it, writing its own peak RSS (KB) on exit.
_CHILD = """import atexit, sys
from pathlib import Path

def _peak(out=Path(sys.argv[1])):
    status = Path("/proc/self/status")
    lines = status.read_text().splitlines() if status.exists() else []
    out.write_text(next((line.split()[1] for line in lines if line.startswith("VmHWM:")), ""))

atexit.register(_peak)
from llmspace.__main__ import main
sys.argv = ["llmspace", *sys.argv[2:]]
sys.exit(main())
"""


def _measured(home: Path, *args: str, timeout: float = 1200) -> tuple[int, str, str, float]:
    """Run `llmspace eval ARGS` in a child: (exit code, stdout, stderr, the child's peak RSS in MB)."""
    out, err, peak = home / "child.out", home / "child.err", home / "child.peak"
    peak.unlink(missing_ok=True)
    env = {**os.environ, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    with out.open("wb") as o, err.open("wb") as e:
        proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(peak), "eval", *args], cwd=ROOT, env=env,
                                stdout=o, stderr=e)
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            pytest.fail(f"eval {args[0]} took over {timeout} s")
        time.sleep(0.2)  # polling the child's end; the bound is the deadline
    proc.returncode = os.waitstatus_to_exitcode(status)
    own = peak.read_text("utf-8").strip() if peak.exists() else ""
    if own:  # Linux: VmHWM in KB, the exec'd program's own peak
        mb = int(own) / 1024
    else:  # no /proc (macOS): ru_maxrss in bytes, which counts the pre-exec image too
        mb = usage.ru_maxrss / 1024 / 1024
    return proc.returncode, out.read_text("utf-8"), err.read_text("utf-8"), mb


def test_eval_new_and_a_budget_stopped_run_over_200000_rows_keep_memory_flat_and_write_only_the_cell_that_ran(home):
    oracle = Oracle()
    with LoopbackLLM() as srv:
        srv.responder = oracle
        write_eval(home, srv, [{"id": "x", "question": "What is 1 + 1?", "expected": "2"}])  # models.json and the thread
        ws = home / "workspace"
        (ws / "quiz.eval.yaml").unlink()
        dataset = ws / "big.csv"
        _write_csv(dataset, ROWS)

        code, out, err, new_mb = _measured(home, "new", "quiz.json", "--dataset", str(dataset), "--models", "loop/good")
        assert code == 0, err
        assert f"({ROWS} cases" in out

        code, out, err, run_mb = _measured(home, "run", str(ws / "quiz.eval.yaml"), "--budget", "0.00003", "--no-cache")
        assert code == 2, err  # cells left unrun
        assert "Stopped by the budget" in out

    print(f"peak RSS: eval new {new_mb:.0f} MB, budget-stopped eval run {run_mb:.0f} MB")
    assert new_mb < PEAK_BOUND_MB, f"eval new peaked at {new_mb:.0f} MB"
    assert run_mb < PEAK_BOUND_MB, f"the budget-stopped eval run peaked at {run_mb:.0f} MB"
    assert oracle.model_calls("good") == 1
    (folder,) = (home / "evals" / "quiz").iterdir()
    summary = json.loads((folder / "summary.json").read_text("utf-8"))
    (group,) = summary["groups"]
    assert (summary["cases"], summary["cells"], summary["complete"]) == (ROWS, ROWS, False)
    assert (group["passed"], group["pending"], group["notRun"]) == (1, ROWS - 1, ROWS - 1)
    rows = (folder / "results.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(r)["key"] for r in rows] == ["case-0|loop/good|default|#1"]
    assert len((folder / "results.csv").read_text("utf-8").splitlines()) == 2
    assert f"{ROWS - 1} of {ROWS} cases not run" in (folder / "junit.xml").read_text("utf-8")
    xmlschema.XMLSchema(str(Path(__file__).with_name("JUnit.xsd"))).validate(str(folder / "junit.xml"))

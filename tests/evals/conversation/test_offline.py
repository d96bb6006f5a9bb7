"""A whole conversation evaluation in a network namespace with only loopback up: the simulated
user, the agent, the tool simulator and the judge all answer on 127.0.0.1, nothing else is
reachable, and the run gives the example's verdicts. Needs root and `unshare`; skipped with
the reason otherwise."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.evals.conversation.test_example import EXPECTED

ROOT = Path(__file__).resolve().parents[3]


def _namespace_problem() -> str | None:
    if os.geteuid() != 0:
        return "a network namespace needs root here"
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "unshare or ip is not installed"
    probe = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, timeout=60)
    if probe.returncode != 0:
        return f"unshare -n failed: {probe.stderr.decode(errors='replace').strip()}"
    return None


def test_a_conversation_evaluation_runs_whole_with_only_loopback_up(tmp_path):
    problem = _namespace_problem()
    if problem is not None:
        pytest.skip(problem)
    home = tmp_path / "home"
    home.mkdir()
    inner = f"ip link set lo up && exec {shlex.quote(sys.executable)} -m tests.evals.conversation.offline_run {shlex.quote(str(home))}"
    env = {k: v for k, v in os.environ.items() if k not in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY")}

    done = subprocess.run(["unshare", "-n", "sh", "-c", inner], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)

    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line is not None, done.stderr[-3000:]
    result = json.loads(line[len("RESULT "):])
    assert result["outside"] is False  # the namespace reaches nothing but itself
    assert result["code"] == 1 and result["statuses"] == EXPECTED
    assert set(result["calls"]) == {"agent", "user", "tools", "judge"}

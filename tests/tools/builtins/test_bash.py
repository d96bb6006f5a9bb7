"""The `bash` built-in: JSON result, exit codes, working directory, timeout and cancel."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from llmspace.cancel import CancelToken
from llmspace.core.model import ToolCall
from llmspace.tools.builtins import builtin_tool

from ..conftest import Runner


def test_bash_returns_stdout_stderr_and_exit_code_as_pretty_json(run: Runner) -> None:
    text = run.ok("bash", command="echo out; echo err >&2; exit 3")
    assert json.loads(text) == {"stdout": "out\n", "stderr": "err\n", "exitCode": 3}
    assert text == json.dumps({"stdout": "out\n", "stderr": "err\n", "exitCode": 3}, indent=2)


def test_bash_runs_in_the_working_directory_in_a_fresh_shell(run: Runner) -> None:
    assert json.loads(run.ok("bash", command="pwd"))["stdout"].strip() == str(run.cwd)
    run.ok("bash", command="export LEAK=1; cd /")
    result = json.loads(run.ok("bash", command='echo "[$LEAK]"; pwd'))
    assert result["stdout"] == f"[]\n{run.cwd}\n"


def _gone(pid: int, within: float = 5.0) -> bool:
    """True once process `pid` no longer exists (bounded wait for the kernel to reap it)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z"):
                return True  # a zombie waiting for its reaper is already dead
        except (OSError, IndexError):
            return True
        threading.Event().wait(0.01)
    return False


def test_bash_timeout_kills_the_process_group_and_reports_the_milliseconds(run: Runner, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    text = run.err("bash", command=f"sleep 30 & echo $! > {pidfile}; sleep 30", timeout=1500)
    assert text == "Command timed out after 1500ms"
    # the background child was in the same process group and is gone too
    assert _gone(int(pidfile.read_text().strip()))


def test_bash_cancel_stops_the_command(run: Runner) -> None:
    cancel = CancelToken()
    tool = builtin_tool("bash")
    call = ToolCall.model_validate({"id": "c", "input": {"name": "bash", "arguments": {"description": "d", "command": "echo started; sleep 30"}}})
    result: list = []
    worker = threading.Thread(target=lambda: result.append(run.router.execute(tool, call, run.ctx, cancel)))
    worker.start()
    cancel.cancel()
    worker.join(10)
    assert not worker.is_alive()
    assert result[0].isError is True and result[0].text() == "Cancelled"


def test_bash_in_a_missing_working_directory_is_an_error(tmp_path: Path) -> None:
    r = Runner(tmp_path / "gone")
    assert "does not exist" in r.err("bash", command="true")

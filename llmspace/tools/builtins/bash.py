"""The `bash` built-in: `bash -c COMMAND` in a fresh shell (own process group) in the
working directory; returns pretty JSON `{"stdout", "stderr", "exitCode"}` (a non-zero
exit is not an error). Timeout (ms, default 120000, max 600000) or cancel kills the
whole process group. No output truncation (as in the original LLM Space app).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any

from ..base import CallEnv, ToolError

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000


def _timeout_ms(args: dict[str, Any]) -> int:
    value = args.get("timeout")
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return DEFAULT_TIMEOUT_MS
    return int(min(value, MAX_TIMEOUT_MS))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        if sys.platform.startswith("win"):
            proc.kill()
        else:
            os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def bash(args: dict[str, Any], env: CallEnv) -> str:
    command = str(args["command"])
    timeout_ms = _timeout_ms(args)
    cwd = env.cwd()
    if not cwd.is_dir():
        raise ToolError(f"The working directory {cwd} does not exist.")
    proc = subprocess.Popen(
        ["bash", "-c", command],
        cwd=str(cwd),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    cancelled = threading.Event()

    def on_cancel() -> None:
        cancelled.set()
        _kill_group(proc)

    env.cancel.on_cancel(on_cancel)
    try:
        stdout, stderr = proc.communicate(timeout=timeout_ms / 1000.0)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        raise ToolError(f"Command timed out after {timeout_ms}ms") from None
    finally:
        if proc.poll() is None:
            _kill_group(proc)
    if cancelled.is_set():
        raise ToolError("Cancelled")
    result = {
        "stdout": stdout.decode("utf-8", errors="replace"),
        "stderr": stderr.decode("utf-8", errors="replace"),
        "exitCode": proc.returncode,
    }
    return json.dumps(result, indent=2, ensure_ascii=False)

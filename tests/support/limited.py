"""Run a snippet of Python in a child interpreter with an address-space limit and a deadline,
for tests of inputs that used to exhaust memory or time ("billion laughs"): the child fails
fast with a MemoryError (or is killed at the deadline) instead of taking the test machine down.

    done = run_limited("from llmspace.jsonio import load_yaml; load_yaml(TEXT)", memory_mb=1024, timeout=120)
    done.returncode, done.stdout, done.stderr, done.seconds
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Limited:
    returncode: int | None  # None: killed at the deadline
    stdout: str
    stderr: str
    seconds: float


def run_limited(code: str, *, memory_mb: int = 1024, timeout: float = 120.0, env: dict[str, str] | None = None,
                args: list[str] | None = None) -> Limited:
    """Run `python -c code` (or `python ARGS…` when `args` is given) under RLIMIT_AS."""
    import resource

    limit = memory_mb * 1024 * 1024

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    argv = [sys.executable, *(args if args is not None else ["-c", code])]
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=cap)
    try:
        out, err = proc.communicate(timeout=timeout)
        code_ = proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        code_ = None
    return Limited(code_, out, err, time.monotonic() - started)


def billion_laughs(indent: str = "", levels: int = 9) -> str:
    """YAML mapping entries `l0:` … `l8:` at `indent`: nine anchors of ten aliases each, so
    `*l8` stands for 10^9 strings ("billion laughs")."""
    lines = [f"{indent}l0: &l0 [" + ", ".join(["lol"] * 10) + "]"]
    for n in range(1, levels):
        lines.append(f"{indent}l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def billion_laughs_flow(levels: int = 9) -> str:
    """The same anchors as one YAML flow list `[&l0 […], &l1 [*l0, …], …]`."""
    items = ["&l0 [" + ", ".join(["lol"] * 10) + "]"]
    items += [f"&l{n} [" + ", ".join([f"*l{n - 1}"] * 10) + "]" for n in range(1, levels)]
    return "[" + ", ".join(items) + "]"

"""Where the suite's minutes go (issue 37): with `--durations` (as `make test` runs it) the
terminal summary adds the time per test directory and the slowest test files — each test's
set-up, call and tear-down summed, so a module fixture counts in its file. Also under
pytest-xdist (the reports reach the controller). With LLMSPACE_TEST_DURATIONS_OUT=FILE it also
writes the seconds of every file there as JSON: tests/support/durations.json is such a snapshot,
the order the files go to the workers in (tests/support/file_order.py). Loaded by tests/conftest.py."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path, PurePosixPath

import pytest

from llmspace.jsonio import write_json_atomic

FILES_SHOWN = 15
_per_file: Counter[str] = Counter()
_tests: Counter[str] = Counter()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = report.nodeid.split("::", 1)[0]
    _per_file[path] += report.duration
    if report.when == "call":
        _tests[path] += 1


def _directory(path: str) -> str:
    parts = PurePosixPath(path).parts
    return "/".join(parts[:2]) if len(parts) > 2 else path


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    out = os.environ.get("LLMSPACE_TEST_DURATIONS_OUT")
    if out and _per_file and not os.environ.get("PYTEST_XDIST_WORKER"):
        write_json_atomic(Path(out), {path: round(seconds, 1) for path, seconds in sorted(_per_file.items())})
    if not config.getoption("durations", None) or not _per_file:
        return
    per_dir: Counter[str] = Counter()
    for path, seconds in _per_file.items():
        per_dir[_directory(path)] += seconds
    total = sum(_per_file.values())
    write = terminalreporter.write_line
    terminalreporter.section("minutes per directory")
    for name, seconds in per_dir.most_common():
        write(f"{seconds:8.1f}s {100 * seconds / total:5.1f}%  {name}")
    write(f"{total:8.1f}s in all (set-up, call and tear-down of each test)")
    terminalreporter.section(f"slowest {FILES_SHOWN} test files")
    for path, seconds in _per_file.most_common(FILES_SHOWN):
        write(f"{seconds:8.1f}s {_tests[path]:5d} tests  {path}")

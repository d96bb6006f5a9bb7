"""Shared fixtures: a temporary LLM_SPACE_HOME and an App built on it. Without Xvfb and
without a display the GUI tests (tests/ui/) skip with the reason instead of stopping the run
(`make test` on a machine where the set-up could not install Xvfb; with CI set they run and fail)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.paths import DataRoot
from tests.support import file_order

UI_TESTS = Path(__file__).parent / "ui"

pytest_plugins = ["tests.support.minutes"]  # the minutes per directory and file, with --durations


@pytest.hookimpl(optionalhook=True)
def pytest_xvfb_disable(config: pytest.Config) -> bool:
    """No Xvfb: pytest-xvfb stands aside instead of refusing the backend pyproject.toml names."""
    return shutil.which("Xvfb") is None


# Under pytest-xdist (`make test PYTEST_WORKERS=2`: --dist loadfile) a file's tests run in one
# worker, so its module fixtures (the Ray cluster, the Qwen engine) are set up once; these files
# share a worker too: Ray's `auto` address finds any cluster running on this machine, so the
# test that no cluster is joined must not run while the Ray tests' cluster is up.
SAME_WORKER = {"tests/evals/test_ray_executor.py": "ray", "tests/evals/test_executor_choice.py": "ray"}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """--dist loadfile, with the files of SAME_WORKER in one worker."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            scope: str = super()._split_scope(nodeid)
            return SAME_WORKER.get(scope, scope)

    # The files in collection order, which each worker made longest first (below), not xdist's
    # order by number of tests.
    config.option.loadscopereorder = False
    return Scheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):  # every worker collects, and orders, the same way
        items[:] = file_order.longest_first(items, file_order.snapshot())
    if os.environ.get("DISPLAY") or os.environ.get("CI"):
        return
    skip = pytest.mark.skip(reason="no display: Xvfb is not installed (sudo apt-get install -y xvfb; "
                                   "scripts/setup-test-env.sh installs it as root)")
    for item in items:
        if item.path.is_relative_to(UI_TESTS):
            item.add_marker(skip)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data root; LLM_SPACE_HOME points at it for the test and its subprocesses."""
    root = tmp_path / "llm-space-home"
    root.mkdir()
    monkeypatch.setenv("LLM_SPACE_HOME", str(root))
    # Deleted test files go to the data root's .trash, not the real user's trash.
    monkeypatch.setenv("LLM_SPACE_NO_OS_TRASH", "1")
    # Secrets go to the data root's settings/, never to the machine's keyring: set here, before
    # any App of the test builds its SecretStore (a fixture setting it after `app` came too late,
    # and a keyring that answered in one xdist worker took a test's GitHub token).
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")
    return root


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary HOME, so the default folders (~/.claude/skills, …) are test folders."""
    h = tmp_path / "user-home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    return h


@pytest.fixture
def app(home: Path):
    application = App(DataRoot(home))
    yield application
    application.close()

"""Choosing where evaluation cells run, without a cluster: `--executor`, the file's `executor`,
`settings/evals.json` and RAY_ADDRESS in that order; what `--executor ray` refuses before
anything runs; the message without Ray; version checks; Ray left out of the executable."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

from llmspace.cli import main
from llmspace.evals.ray_pool import default_address, version_problem
from tests.evals.support import Oracle, arithmetic_and_extraction, write_eval, write_thread
from tests.support.llm_server import LoopbackLLM

ROOT = Path(__file__).resolve().parents[2]
MCP_TOOL = {"type": "mcp", "name": "search_docs", "serverId": "docs", "serverName": "Docs", "toolName": "search",
            "description": "search", "parameters": {"type": "object", "properties": {}}}


@pytest.fixture
def srv():
    with LoopbackLLM() as server:
        server.responder = Oracle()
        yield server


@pytest.fixture
def no_ray(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError


def _run(*args: str) -> int:
    return main(["eval", "run", *args])


def _results(home: Path) -> list[Path]:
    base = home / "evals" / "quiz"
    return sorted(base.iterdir()) if base.exists() else []


def test_without_ray_executor_ray_says_how_to_install_it_before_anything_runs(home, srv, no_ray, capsys):
    path = write_eval(home, srv, arithmetic_and_extraction(2))

    assert _run(str(path), "--executor", "ray") == 2

    err = capsys.readouterr().err
    assert "needs Ray, which is not installed" in err and "pip install 'llmspace[ray]'" in err
    assert srv.requests == [] and _results(home) == []


def test_cells_whose_thread_uses_mcp_tools_are_refused_on_ray_naming_them(home, srv, capsys):
    path = write_eval(home, srv, arithmetic_and_extraction(2))
    write_thread(home, tools=[MCP_TOOL])

    assert _run(str(path), "--executor", "ray") == 2

    err = capsys.readouterr().err
    assert "search_docs (mcp)" in err and "add-1|loop/good|default|#1" in err and "--executor local" in err
    assert srv.requests == [] and _results(home) == []


def test_tool_loop_cells_are_refused_on_ray_naming_them(home, srv, capsys):
    path = write_eval(home, srv, arithmetic_and_extraction(2))
    write_thread(home, tools=[{"type": "builtin", "name": "bash"}])

    assert _run(str(path), "--executor", "ray", "--react") == 2

    err = capsys.readouterr().err
    assert "run the tool loop" in err and "add-1|loop/good|default|#1" in err
    assert srv.requests == [] and _results(home) == []


def test_the_setting_chooses_ray_when_the_file_and_flags_say_nothing(home, srv, no_ray, capsys):
    path = write_eval(home, srv, arithmetic_and_extraction(2))
    (home / "settings" / "evals.json").write_text(json.dumps({"executor": "ray"}), encoding="utf-8")

    assert _run(str(path)) == 2

    assert "needs Ray" in capsys.readouterr().err


def test_the_file_wins_over_the_setting_and_the_flag_over_the_file(home, srv, no_ray, capsys):
    (home / "settings").mkdir(exist_ok=True)
    (home / "settings" / "evals.json").write_text(json.dumps({"executor": "ray"}), encoding="utf-8")
    path = write_eval(home, srv, arithmetic_and_extraction(2), executor="local")
    assert _run(str(path)) == 0  # the file's local beats the setting's ray

    path = write_eval(home, srv, arithmetic_and_extraction(2), executor="ray")
    assert _run(str(path), "--fresh") == 2  # the file's ray (and Ray is missing)
    assert "needs Ray" in capsys.readouterr().err
    assert _run(str(path), "--fresh", "--executor", "local") == 0  # the flag beats the file


def test_an_unknown_executor_in_the_file_is_an_error(home, srv, capsys):
    path = write_eval(home, srv, arithmetic_and_extraction(2), executor="spark")

    assert _run(str(path)) == 2

    assert "executor must be local or ray" in capsys.readouterr().err


def test_the_ray_address_comes_from_the_flag_then_the_file_then_the_setting_then_ray_address(monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", "env:6379")
    assert default_address("flag:1", "file:2", "setting:3") == "flag:1"
    assert default_address(None, "file:2", "setting:3") == "file:2"
    assert default_address(None, None, "setting:3") == "setting:3"
    assert default_address(None, None, None) == "env:6379"
    monkeypatch.delenv("RAY_ADDRESS")
    assert default_address(None, None, "") is None


def test_ray_client_needs_the_same_ray_and_python_versions_on_both_ends():
    here = {"ray": "2.60.0", "python": "3.11.7", "llmspace": "0.1.0"}
    assert version_problem("ray://head:10001", here, dict(here)) is None
    patch = version_problem("ray://head:10001", here, {**here, "python": "3.11.9"})
    assert patch is not None and "Python 3.11.9 there, 3.11.7 here" in patch and "ray://head:10001" in patch
    assert version_problem("head:6379", here, {**here, "python": "3.11.9"}) is None  # a node of the cluster: minor matters
    other = version_problem("ray://head:10001", here, {**here, "ray": "2.55.1", "python": "3.12.1"})
    assert other is not None and "Ray 2.55.1 there, 2.60.0 here" in other and "Python 3.12.1 there" in other
    assert "llmspace 0.2.0 there" in (version_problem("auto", here, {**here, "llmspace": "0.2.0"}) or "")


def test_ray_is_an_extra_of_its_own_and_in_the_dev_extras_but_not_in_the_single_file_executable():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["optional-dependencies"]
    assert any(d.startswith("ray") for d in extras["ray"])
    assert any(d.startswith("ray[default]") for d in extras["dev"])
    tree = ast.parse((ROOT / "build" / "llmspace.spec").read_text("utf-8"))
    excludes = next(node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "EXCLUDES" for t in node.targets))
    assert isinstance(excludes, ast.List)
    assert "ray" in [e.value for e in excludes.elts if isinstance(e, ast.Constant)]


def test_the_ray_tests_skip_with_the_reason_without_ray_and_fail_under_ci(monkeypatch):
    from tests.evals.ray_cluster import require_ray

    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="Ray is not installed"):
        require_ray()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="Ray is not installed"):
        require_ray()


def test_without_an_address_ray_joins_a_cluster_on_this_machine_and_never_starts_one(home, srv, tmp_path):
    import os
    import subprocess

    from tests.evals.ray_cluster import require_ray

    require_ray()
    path = write_eval(home, srv, arithmetic_and_extraction(2))
    user_home = tmp_path / "user"
    user_home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update({"LLM_SPACE_HOME": str(home), "HOME": str(user_home), "RAY_TMPDIR": str(tmp_path / "no-cluster")})

    done = subprocess.run([sys.executable, "-m", "llmspace", "eval", "run", str(path), "--executor", "ray"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)

    assert done.returncode == 2 and "Could not join the Ray cluster at auto" in done.stderr, done.stderr
    assert srv.requests == [] and not (user_home / ".ray").exists()  # no cluster, no token of Ray's written


def _uses_of_evals_run(rel: str) -> tuple[set[str], set[str]]:
    """(names a module imports from evals.start, names of evals.run and evals.ray_pool it uses)."""
    tree = ast.parse((ROOT / rel).read_text("utf-8"))
    started: set[str] = set()
    used: set[str] = set()
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = {a.name for a in node.names}
            if node.module.endswith("evals.start"):
                started |= names
            elif node.module.endswith(("evals.run", "evals.ray_pool")):
                used |= names
            elif node.module.endswith("evals"):
                aliases |= {a.asname or a.name for a in node.names if a.name in ("run", "ray_pool")}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            used.add(node.attr)
    return started, used


def test_the_command_line_and_the_app_start_a_run_the_one_way_start_run_does():
    steps = {"executor_setting", "default_address", "prepare", "open_results"}  # start_run's own steps
    for rel, starts in (("llmspace/commands/eval.py", True), ("llmspace/presenters/evaluations.py", True),
                        ("llmspace/ui/evals/actions.py", False)):
        started, used = _uses_of_evals_run(rel)
        assert not used & steps, f"{rel} starts a run itself: {sorted(used & steps)}"
        assert not starts or "start_run" in started, f"{rel} does not start runs through start_run"

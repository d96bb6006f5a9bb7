"""The `grep` built-in with ripgrep and with the pure-Python fallback: same output."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ..conftest import Runner

HAS_RG = shutil.which("rg") is not None


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "a.py").write_text("import os\nALPHA = 1\n\nbeta = 2\ngamma = 3\ndelta = 4\nalpha_again = 5\n")
    (root / "src" / "pkg" / "b.txt").write_text("nothing\nAlpha here\n")
    (root / "src" / "zz.md").write_text("alpha in markdown\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "dep.py").write_text("alpha\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("alpha\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "h.py").write_text("alpha\n")
    (root / "bin.dat").write_bytes(b"alpha\0binary")
    return root


CASES = [
    {"pattern": "alpha"},
    {"pattern": "alpha", "case_insensitive": True},
    {"pattern": "alpha", "case_insensitive": True, "glob": "*.py"},
    {"pattern": "(?i)alpha", "glob": "**/*.txt"},
    {"pattern": "gamma", "context_lines": 1},
    {"pattern": "alpha|gamma", "context_lines": 2, "case_insensitive": True},
    {"pattern": "^beta", "path": "src/a.py"},
    {"pattern": "nomatchatall"},
]


def _runners(cwd: Path) -> list[Runner]:
    return [Runner(cwd), Runner(cwd, grep_fallback=True)]


@pytest.mark.skipif(not HAS_RG, reason="ripgrep is not installed")
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_ripgrep_and_the_python_fallback_print_the_same(tree: Path, case: dict) -> None:
    args = {"path": ".", **case}
    rg, py = (r.out("grep", **args) for r in _runners(tree))
    assert rg.isError is False and py.isError is False
    assert py.text() == rg.text()


@pytest.mark.parametrize("fallback", [False, True] if HAS_RG else [True])
def test_grep_prints_path_line_text_and_skips_noise_hidden_and_binary(tree: Path, fallback: bool) -> None:
    r = Runner(tree, grep_fallback=fallback)
    assert r.ok("grep", pattern="alpha", path=".").split("\n") == [
        f"{tree}/src/a.py:7:alpha_again = 5",
        f"{tree}/src/zz.md:1:alpha in markdown",
    ]


@pytest.mark.parametrize("fallback", [False, True] if HAS_RG else [True])
def test_grep_context_lines_mark_context_with_dashes_and_groups_with_separators(tree: Path, fallback: bool) -> None:
    r = Runner(tree, grep_fallback=fallback)
    assert r.ok("grep", pattern="ALPHA|delta", path="src/a.py", context_lines=1).split("\n") == [
        f"{tree}/src/a.py-1-import os",
        f"{tree}/src/a.py:2:ALPHA = 1",
        f"{tree}/src/a.py-3-",
        "--",
        f"{tree}/src/a.py-5-gamma = 3",
        f"{tree}/src/a.py:6:delta = 4",
        f"{tree}/src/a.py-7-alpha_again = 5",
    ]


@pytest.mark.parametrize("fallback", [False, True] if HAS_RG else [True])
def test_grep_without_matches_says_so(tree: Path, fallback: bool) -> None:
    assert Runner(tree, grep_fallback=fallback).ok("grep", pattern="zebra", path=".") == "No matches found."


@pytest.mark.parametrize("fallback", [False, True] if HAS_RG else [True])
def test_grep_errors_for_a_bad_regex_and_a_missing_path(tree: Path, fallback: bool) -> None:
    r = Runner(tree, grep_fallback=fallback)
    assert "regex parse error" in r.err("grep", pattern="a(", path=".")
    assert "No such file or directory" in r.err("grep", pattern="a", path="missing")


def test_the_fallback_can_be_forced_by_environment(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from llmspace.tools.base import CallEnv, ToolContext
    from llmspace.tools.builtins.grep import use_fallback

    env = CallEnv(ctx=ToolContext(working_directory=str(tree)))
    monkeypatch.setenv("LLMSPACE_GREP_FALLBACK", "1")
    assert use_fallback(env) is True
    monkeypatch.setenv("LLMSPACE_GREP_FALLBACK", "0")
    assert use_fallback(env) is (not HAS_RG)


def test_without_ripgrep_on_path_the_fallback_answers(tree: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    monkeypatch.delenv("LLMSPACE_GREP_FALLBACK", raising=False)
    assert Runner(tree).ok("grep", pattern="markdown", path=".") == f"{tree}/src/zz.md:1:alpha in markdown"

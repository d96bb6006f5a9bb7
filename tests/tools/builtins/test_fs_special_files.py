"""The file tools and skill discovery never block on a named pipe: a FIFO is refused with a
clear message at once (a blocking open of a FIFO with no writer would wait forever)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from llmspace.skills.skill import Skill, scan_folder

from ..conftest import Runner

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX-only")


def _bounded(fn: Callable[[], Any], seconds: float = 20.0) -> Any:
    """Run `fn` on a thread; fail (instead of hanging the suite) when it does not return."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, daemon=True).start()
    assert done.wait(seconds), "blocked on a named pipe"
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_read_edit_and_grep_refuse_a_named_pipe_instead_of_waiting(run: Runner) -> None:
    os.mkfifo(run.cwd / "pipe.txt")
    assert "named pipe" in _bounded(lambda: run.err("read", path="pipe.txt"))
    assert "named pipe" in _bounded(lambda: run.err("edit", path="pipe.txt", old_string="a", new_string="b"))
    (run.cwd / "real.txt").write_text("needle here\n")
    out = _bounded(lambda: run.out("grep", pattern="needle", path=".")).text()
    assert "needle here" in out


def test_a_skill_whose_skill_md_is_a_named_pipe_is_reported_not_waited_on(tmp_path: Path) -> None:
    good = tmp_path / "good-skill"
    good.mkdir()
    (good / "SKILL.md").write_text("---\nname: good-skill\ndescription: fine\n---\nbody\n")
    bad = tmp_path / "piped-skill"
    bad.mkdir()
    os.mkfifo(bad / "SKILL.md")
    skills, problems = _bounded(lambda: scan_folder(tmp_path))
    assert [s.name for s in skills] == ["good-skill"]
    assert any("piped-skill" in p and "named pipe" in p for p in problems), problems
    # reading a skill whose file was swapped for a FIFO after the scan fails clearly too
    (good / "SKILL.md").unlink()
    os.mkfifo(good / "SKILL.md")
    skill: Skill = skills[0]
    with pytest.raises(Exception, match="named pipe"):
        _bounded(skill.body)

"""todo_write, sleep, ask_user_question and skill (`tools/builtins/misc.py`)."""

from __future__ import annotations

import threading
from pathlib import Path

from llmspace.cancel import CancelToken
from llmspace.core.model import ToolCall
from llmspace.tools.base import ToolContext
from llmspace.tools.builtins import builtin_tool

from ..conftest import Runner


def test_todo_write_returns_ok(run: Runner) -> None:
    assert run.ok("todo_write", todos=[{"content": "plan", "status": "in_progress"}, {"content": "ship", "status": "pending"}]) == "OK"


def test_todo_write_rejects_an_unknown_status(run: Runner) -> None:
    text = run.err("todo_write", todos=[{"content": "plan", "status": "blocked"}])
    assert "todos/0/status" in text and "blocked" in text


def test_sleep_waits_and_returns_ok(run: Runner) -> None:
    assert run.ok("sleep", duration_ms=1) == "OK"


def test_sleep_rejects_negative_durations(run: Runner) -> None:
    assert run.err("sleep", duration_ms=-5) == "duration_ms must be a non-negative finite number."


def test_sleep_ends_early_when_cancelled(run: Runner) -> None:
    cancel = CancelToken()
    call = ToolCall.model_validate({"id": "c", "input": {"name": "sleep", "arguments": {"description": "d", "duration_ms": 600_000}}})
    box: list = []
    worker = threading.Thread(target=lambda: box.append(run.router.execute(builtin_tool("sleep"), call, run.ctx, cancel)))
    worker.start()
    cancel.cancel()
    worker.join(10)
    assert box and box[0].isError is True and box[0].text() == "Cancelled"


def test_ask_user_question_cannot_run_automatically(run: Runner) -> None:
    questions = [{"question": "Which?", "header": "Pick", "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}], "multi_select": False}]
    assert run.err("ask_user_question", questions=questions) == "ask_user_question needs a human answer and cannot be executed automatically."


def test_ask_user_question_definition_terminates() -> None:
    tool = builtin_tool("ask_user_question")
    assert tool is not None and tool.terminate is True and tool.is_executable() is False


def _write_skill(folder: Path, name: str, body: str) -> Path:
    d = folder / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: A test skill.\n---\n\n{body}\n\n", encoding="utf-8")
    return d


def test_skill_returns_its_base_directory_and_body(app, home: Path) -> None:
    folder = _write_skill(home / "skills", "unit-test-skill", "# Steps\nDo the thing.")
    router = app.tools
    call = ToolCall.model_validate({"id": "c", "input": {"name": "skill", "arguments": {"name": "unit-test-skill"}}})
    out = router.execute(builtin_tool("skill"), call, ToolContext(working_directory=str(home), skills=app.skills))
    assert out.isError is False
    assert out.text() == f"Base directory for this skill: {folder.absolute()}\n\n# Steps\nDo the thing."


def test_skill_not_found(app, home: Path) -> None:
    router = app.tools
    call = ToolCall.model_validate({"id": "c", "input": {"name": "skill", "arguments": {"name": "no-such-skill"}}})
    out = router.execute(builtin_tool("skill"), call, ToolContext(working_directory=str(home), skills=app.skills))
    assert out.isError is True and out.text() == 'Skill "no-such-skill" not found.'


def test_skill_uses_the_context_skills_when_given(tmp_path: Path) -> None:
    class FakeSkill:
        path = tmp_path
        def body(self) -> str:
            return "body"

    class Skills:
        def find_enabled(self, name: str):
            return FakeSkill() if name == "x" else None

    r = Runner(tmp_path)
    r.ctx.skills = Skills()
    assert r.ok("skill", name="x") == f"Base directory for this skill: {tmp_path}\n\nbody"

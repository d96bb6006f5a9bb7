"""The workspace tree lists threads, not evaluation files: `*.eval.json` and `*.eval.yaml`
beside a thread are left out, the thread stays."""

from __future__ import annotations

from tests.evals.support import write_thread


def test_evaluation_files_beside_a_thread_are_not_listed_as_threads(app, home):
    write_thread(home, "quiz.json")
    (home / "workspace" / "quiz.eval.json").write_text('{"thread": "quiz.json"}', encoding="utf-8")
    (home / "workspace" / "quiz.eval.yaml").write_text("thread: quiz.json\n", encoding="utf-8")
    (home / "workspace" / "sub").mkdir()
    (home / "workspace" / "sub" / "Other.EVAL.JSON").write_text("{}", encoding="utf-8")

    names = [e.name for e in app.workspace.list_tree()]
    sub = next(e for e in app.workspace.list_tree() if e.name == "sub")

    assert names == ["sub", "quiz.json"]
    assert sub.children == []

"""The workspace on disk: tree, create, rename, duplicate, move, trash, folders, confinement."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from llmspace.core.names import validate_stem
from llmspace.core.threadio import parse_thread, serialize_thread
from llmspace.core.tree import Entry
from llmspace.core.workspace import Workspace
from llmspace.errors import InvalidName, NameConflict, PathOutsideWorkspace, UserFacingError


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "workspace"
    root.mkdir()
    return Workspace(root, trash_dir=tmp_path / ".trash", use_os_trash=False)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` with its bytes (to prove nothing changed)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def names(entries: list[Entry]) -> list[str]:
    return [e.name for e in entries]


def test_tree_lists_folders_first_then_json_files_by_name_without_reading_them(ws: Workspace):
    (ws.root / "b").mkdir()
    (ws.root / "A").mkdir()
    (ws.root / "A" / "inner.json").write_bytes(b"not even json")
    for name in ("zeta.json", "Alpha.json", "alpha-1.json", "notes.txt", ".hidden.json", ".json"):
        (ws.root / name).write_bytes(b"{}")
    tree = ws.list_tree()
    assert names(tree) == ["A", "b", "Alpha.json", "alpha-1.json", "zeta.json"]
    assert tree[0].is_dir and tree[0].children[0] == Entry("A/inner.json", "inner.json", "inner", False, None)
    assert tree[2].title == "Alpha" and tree[2].rel == "Alpha.json"
    assert names(ws.list_tree("A")) == ["inner.json"] and ws.list_tree("A")[0].rel == "A/inner.json"


def test_symlinks_leading_outside_are_refused_and_not_listed(ws: Workspace, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.json").write_bytes(b"{}")
    os.symlink(outside, ws.root / "link")
    os.symlink(outside / "secret.json", ws.root / "secret.json")
    assert ws.list_tree() == []
    for rel in ("link/secret.json", "secret.json", "link"):
        with pytest.raises(PathOutsideWorkspace):
            ws.open(rel)
    with pytest.raises(PathOutsideWorkspace):
        ws.create_thread("link")
    assert snapshot(outside) == {"secret.json": b"{}"}


@pytest.mark.parametrize("rel", ["../x.json", "a\x00b.json", "a/../../x.json", "/etc/passwd", "C:/x.json", "..\\x.json", "//server/x.json"])
def test_escaping_paths_are_refused_everywhere(ws: Workspace, rel: str):
    ws.create_thread()
    before = snapshot(ws.root.parent)
    for call in (lambda: ws.open(rel), lambda: ws.exists(rel), lambda: ws.delete(rel),
                 lambda: ws.move("untitled.json", rel), lambda: ws.create_thread(rel), lambda: ws.list_tree(rel),
                 lambda: ws.rename(rel, "x"), lambda: ws.duplicate(rel), lambda: ws.create_folder(rel)):
        with pytest.raises((PathOutsideWorkspace, InvalidName)):
            call()
    assert snapshot(ws.root.parent) == before


def test_create_names_untitled_then_numbered_and_writes_a_blank_thread(ws: Workspace):
    assert [ws.create_thread() for _ in range(3)] == ["untitled.json", "untitled-1.json", "untitled-2.json"]
    raw = (ws.root / "untitled-1.json").read_bytes()
    t = parse_thread(raw)
    assert t.title == "untitled-1" and t.model is None
    assert len(t.messages) == 1 and t.messages[0].role == "user" and t.messages[0].text() == ""
    assert not raw.endswith(b"\n")
    assert ws.create_thread("new/deeper", "plan") == "new/deeper/plan.json"


def test_save_forces_the_title_to_the_file_name_and_skips_unchanged_writes(ws: Workspace):
    rel = ws.create_thread(stem="note")
    t = ws.open(rel)
    t.title = "something else"
    assert ws.save(rel, t) is False  # title forced back; content unchanged
    t.context.systemPrompt = "Hi"
    assert ws.save(rel, t) is True and ws.open(rel).context.systemPrompt == "Hi"


def test_rename_rewrites_the_title_and_never_overwrites(ws: Workspace):
    a = ws.create_thread(stem="a")
    ws.create_thread(stem="b")
    before = snapshot(ws.root)
    with pytest.raises(NameConflict):
        ws.rename(a, "b")
    assert snapshot(ws.root) == before
    assert ws.rename(a, "  c ") == "c.json"
    assert not ws.exists("a.json") and ws.open("c.json").title == "c"
    assert b'"title": "c"' in (ws.root / "c.json").read_bytes()
    assert ws.rename("c.json", "c") == "c.json"


@pytest.mark.parametrize("bad", ["", "   ", ".", "..", "a/b", "a\\b", "what?", "x*", "<x>", 'q"', "a:b", "a|b",
                                 "tab\tname", "CON", "com1", "lpt9.txt", "ends.", "nul"])
def test_invalid_names_are_refused(ws: Workspace, bad: str):
    rel = ws.create_thread(stem="keep")
    with pytest.raises(InvalidName):
        validate_stem(bad)
    with pytest.raises(InvalidName):
        ws.rename(rel, bad)
    with pytest.raises(InvalidName):
        ws.create_folder("", bad)
    assert names(ws.list_tree()) == ["keep.json"]


def test_valid_names_pass():
    for good in ("notes", "über café", "a.b", "con-artist", "version 2", "数据"):
        assert validate_stem(good) == good


def test_duplicate_uses_copy_suffixes_and_retitles(ws: Workspace):
    rel = ws.create_thread(stem="plan")
    assert ws.duplicate(rel) == "plan_copy.json"
    assert ws.duplicate(rel) == "plan_copy_2.json"
    assert ws.duplicate(rel) == "plan_copy_3.json"
    assert ws.open("plan_copy_2.json").title == "plan_copy_2"
    (ws.root / "broken.json").write_bytes(b"{oops")
    assert ws.duplicate("broken.json") == "broken_copy.json"
    assert (ws.root / "broken_copy.json").read_bytes() == b"{oops"


def test_move_never_overwrites_unless_asked_and_then_trashes_the_old_one(ws: Workspace):
    folder = ws.create_folder(name="dest")
    ws.create_thread(folder, "x")
    rel = ws.create_thread("", "x")
    t = ws.open(rel)
    t.context.systemPrompt = "new one"
    ws.save(rel, t)
    before = snapshot(ws.root)
    with pytest.raises(NameConflict):
        ws.move(rel, folder)
    assert snapshot(ws.root) == before
    assert ws.move(rel, folder, overwrite=True) == "dest/x.json"
    assert ws.open("dest/x.json").context.systemPrompt == "new one"
    trashed = list(ws.trash_path.iterdir())
    assert len(trashed) == 1 and parse_thread(trashed[0].read_bytes()).context.systemPrompt is None


def test_a_folder_cannot_move_into_itself_but_can_move_elsewhere(ws: Workspace):
    top = ws.create_folder(name="top")
    inner = ws.create_folder(top, "inner")
    ws.create_thread(inner, "t")
    for dest in (top, inner):
        with pytest.raises(UserFacingError, match="into itself"):
            ws.move(top, dest)
    other = ws.create_folder(name="other")
    assert ws.move(inner, other) == "other/inner"
    assert ws.exists("other/inner/t.json") and not ws.exists("top/inner")
    assert ws.move("other/inner/t.json", "") == "t.json"


def test_delete_goes_to_the_trash_folder_never_a_hard_delete(ws: Workspace):
    rel = ws.create_thread(stem="gone")
    data = (ws.root / rel).read_bytes()
    where = ws.delete(rel)
    assert not ws.exists(rel) and Path(where).read_bytes() == data
    ws.create_thread(stem="gone")
    where2 = ws.delete("gone.json")
    assert where2 != where and Path(where).exists() and Path(where2).exists()
    folder = ws.create_folder(name="f")
    ws.create_thread(folder, "t")
    where3 = Path(ws.delete(folder))
    assert (where3 / "t.json").exists()
    for root in ("", ".", "./"):
        with pytest.raises(UserFacingError, match="root"):
            ws.delete(root)


def test_delete_falls_back_to_the_trash_folder_when_the_os_trash_fails(ws: Workspace, monkeypatch):
    import send2trash

    def broken(path):
        raise OSError("no trash here")

    monkeypatch.setattr(send2trash, "send2trash", broken)
    ws.trash.use_os_trash = True
    rel = ws.create_thread(stem="x")
    where = ws.delete(rel)
    assert Path(where).parent == ws.trash_path and not ws.exists(rel)


def test_delete_uses_the_os_trash_when_it_works(ws: Workspace, monkeypatch, tmp_path: Path):
    import send2trash

    sent: list[str] = []

    def fake(path):
        sent.append(path)
        os.rename(path, tmp_path / "os-trash-item")

    monkeypatch.setattr(send2trash, "send2trash", fake)
    ws.trash.use_os_trash = True
    rel = ws.create_thread(stem="x")
    assert ws.delete(rel) == "os-trash" and sent == [str(ws.root / rel)]


def test_folders_are_created_and_renamed_without_overwriting(ws: Workspace):
    assert ws.create_folder() == "untitled" and ws.create_folder() == "untitled-1"
    ws.create_thread("untitled", "inside")
    with pytest.raises(NameConflict):
        ws.rename_folder("untitled", "untitled-1")
    assert ws.rename_folder("untitled", "projects") == "projects"
    assert ws.exists("projects/inside.json")
    with pytest.raises(UserFacingError):
        ws.rename_folder("", "x")
    with pytest.raises(UserFacingError):
        ws.create_folder("projects/inside.json")


def test_first_start_seeds_four_examples_once(ws: Workspace):
    created = ws.seed_examples()
    assert created == ["general-agent.json", "prompt-with-variables.json", "custom-function-tool.json", "recorded-run.json"]
    assert ws.seed_examples() == []
    for rel in created:
        ws.delete(rel)
    assert ws.seed_examples() == [] and ws.list_tree() == []  # an emptied workspace is not re-seeded


def test_seeded_examples_have_the_promised_content(tmp_path: Path):
    ws = Workspace(tmp_path / "w", use_os_trash=False)
    ws.seed_examples()
    agent = ws.open("general-agent.json")
    assert agent.title == "general-agent" and all(t.type == "builtin" for t in agent.context.tools)
    assert {"read", "bash", "web_search"} <= {t.name for t in agent.context.tools}
    prompt = ws.open("prompt-with-variables.json")
    assert "{{company}}" in prompt.context.systemPrompt and prompt.context.variableVariants.variants["default"]["company"]
    fn = ws.open("custom-function-tool.json")
    assert fn.context.tools[0].type == "function"
    assert fn.messages[1].toolCalls[0].output.text()
    run = ws.open("recorded-run.json")
    assert len(run.runHistory) == 1 and run.runHistory[0].thread.context.messages[1].usage.totalTokens == 99
    for rel in ("general-agent.json", "recorded-run.json"):
        raw = (ws.root / rel).read_bytes()
        assert serialize_thread(parse_thread(raw)) == raw


def test_seeding_skips_a_workspace_that_already_has_threads(ws: Workspace):
    ws.create_thread(stem="mine")
    assert ws.seed_examples() == [] and names(ws.list_tree()) == ["mine.json"]


def test_symlinked_folders_inside_the_workspace_are_listed_without_looping(ws: Workspace):
    folder = ws.create_folder(name="a")
    ws.create_thread(folder, "t")
    os.symlink(ws.root, ws.root / "a" / "loop")
    os.symlink(ws.root / "a", ws.root / "alias")
    tree = ws.list_tree()
    assert names(tree) == ["a", "alias"]
    alias = tree[1]
    assert names(alias.children) == ["loop", "t.json"] and alias.children[0].children == []
    assert ws.open("alias/t.json").title == "t"


@pytest.mark.parametrize("folder", ["a?b", "ok/bad:name", "ok/ spaced", "con"])
def test_new_folders_made_for_a_thread_follow_the_naming_rules_and_nothing_is_created(ws: Workspace, folder: str):
    with pytest.raises(InvalidName):
        ws.create_thread(folder, "t")
    assert list(ws.root.iterdir()) == []


def test_a_bad_thread_name_leaves_no_new_folder_behind(ws: Workspace):
    with pytest.raises(InvalidName):
        ws.create_thread("fresh", "a?b")
    assert not (ws.root / "fresh").exists()


def test_an_existing_folder_with_an_odd_name_still_takes_new_threads(ws: Workspace):
    (ws.root / "made by hand?").mkdir()
    assert ws.create_thread("made by hand?", "t") == "made by hand?/t.json"


def test_a_folder_that_cannot_be_created_is_a_clear_error(ws: Workspace, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "mkdir", refuse)
    with pytest.raises(UserFacingError, match="Permission denied"):
        ws.create_thread("fresh", "t")


def test_a_refused_rename_or_move_is_a_clear_error_and_the_file_stays(ws: Workspace, monkeypatch):
    import llmspace.core.workspace as wsmod

    rel = ws.create_thread(stem="keep")
    ws.create_folder("", "dest")

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(wsmod.os, "rename", refuse)
    for action in (lambda: ws.rename(rel, "other"), lambda: ws.move(rel, "dest"), lambda: ws.delete(rel)):
        with pytest.raises(UserFacingError, match="Permission denied"):
            action()
        assert ws.exists(rel)


def test_delete_into_a_trash_on_another_file_system_copies_then_removes(ws: Workspace, monkeypatch):
    import errno

    import llmspace.core.workspace as wsmod

    rel = ws.create_thread(stem="gone")
    before = ws.resolve(rel).read_bytes()

    def cross_device(src, dst):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(wsmod.os, "rename", cross_device)
    where = Path(ws.delete(rel))
    assert not ws.exists(rel) and where.parent == ws.trash_path and where.read_bytes() == before


def test_a_thread_with_a_malformed_evaluation_opens_repaired_without_touching_the_file(tmp_path):
    from llmspace.core.run_verdicts import only_records_invalid
    from llmspace.errors import ValidationFailed

    ws = Workspace(tmp_path / "ws", use_os_trash=False)
    (tmp_path / "ws").mkdir()
    bad = (b'{\n  "context": {\n    "messages": []\n  },\n  "evaluations": [\n    {\n      "id": "e1",\n'
           b'      "leftRunId": "a",\n      "rightRunId": "b",\n      "verdict": "maybe"\n    }\n  ]\n}')
    path = tmp_path / "ws" / "t.json"
    path.write_bytes(bad)
    with pytest.raises(ValidationFailed) as info:
        ws.open("t.json")
    assert only_records_invalid(info.value.problems)
    thread = ws.open_repaired("t.json")
    assert thread.evaluations == [] and thread.title == "t"
    assert path.read_bytes() == bad
    assert not only_records_invalid([("context.messages[0].role", "bad")])

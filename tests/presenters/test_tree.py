"""Tree presenter: every intent against a real workspace on disk."""

import pytest

from llmspace.errors import NameConflict, UserFacingError
from llmspace.presenters.tree import TreePresenter


@pytest.fixture
def tree(app):
    p = TreePresenter(app.workspace)
    p.refresh()
    return p


def test_new_file_goes_into_the_selected_folder_with_a_free_name(tree):
    folder = tree.new_folder(None)
    assert folder == "untitled"
    a = tree.new_file(folder)
    b = tree.new_file(a)  # a thread selected: its folder
    assert (a, b) == ("untitled/untitled.json", "untitled/untitled-1.json")
    assert folder in tree.expanded
    assert tree.all_threads() == [a, b]


def test_rename_keeps_the_extension_and_refuses_to_overwrite(tree):
    a = tree.new_file(None)
    b = tree.new_file(None)
    assert tree.rename(a, "notes.json") == "notes.json"
    with pytest.raises(NameConflict):
        tree.rename(b, "notes")
    with pytest.raises(UserFacingError):
        tree.rename(b, "bad/name")


def test_renaming_an_expanded_folder_keeps_it_expanded(tree):
    f = tree.new_folder(None)
    tree.set_expanded(f, True)
    assert tree.rename(f, "docs") == "docs" and "docs" in tree.expanded


def test_duplicate_and_delete_to_trash(tree, app):
    a = tree.new_file(None)
    copy = tree.duplicate(a)
    assert copy == "untitled_copy.json"
    tree.delete(copy)
    assert not app.workspace.exists(copy)
    assert "delete" not in tree.delete_prompt(a).lower() and "trash" in tree.delete_prompt(a)


def test_move_reports_a_conflict_then_overwrites_when_confirmed(tree, app):
    f = tree.new_folder(None)
    a = tree.new_file(None)
    tree.new_file(f)  # f/untitled.json
    assert tree.move_conflicts(a, f)
    with pytest.raises(NameConflict):
        tree.move(a, f)
    assert tree.move(a, f, overwrite=True) == "untitled/untitled.json"
    assert not app.workspace.exists(a)


def test_external_changes_are_noticed_by_the_folder_signature(tree, app):
    assert not tree.changed_on_disk()
    (app.workspace.root / "from-elsewhere.json").write_text('{"title": "x"}', "utf-8")
    assert tree.changed_on_disk()
    tree.refresh()
    assert "from-elsewhere.json" in tree.all_threads() and not tree.changed_on_disk()


def test_reveal_path_is_the_folder_of_the_selection(tree, app):
    a = tree.new_file(None)
    assert tree.reveal_path(a) == app.workspace.root
    assert tree.reveal_path(None) == app.workspace.root


def test_importing_empty_clipboard_text_says_what_to_do(tree):
    with pytest.raises(UserFacingError, match="clipboard is empty"):
        tree.import_text("  ")


def test_import_files_and_clipboard_create_threads_in_the_selected_folder(tree, app, tmp_path):
    folder = tree.new_folder(None)
    src = tmp_path / "chat.json"
    src.write_text('{"messages": [{"role": "user", "content": "hi"}]}', "utf-8")
    bad = tmp_path / "bad.json"
    bad.write_text("not json", "utf-8")
    created = tree.import_files([str(src), str(bad)], folder)
    assert created == ["untitled/chat.json"]
    assert tree.last_import_skipped and tree.last_import_skipped[0][0] == "bad.json"
    clip = tree.import_text('{"title": "x", "context": {"messages": []}}', None)
    assert clip == ["clipboard.json"]
    with pytest.raises(UserFacingError):
        tree.import_text("[1, 2")


def test_a_root_folder_named_shared_is_pinned_first(tree, app):
    app.workspace.create_folder("", "alpha")
    app.workspace.create_folder("", "shared")
    tree.refresh()
    assert [e.rel for e in tree.entries][:2] == ["shared", "alpha"]

"""Names already on disk that hold bidi or control characters are shown as `\\u202E`-style
escapes in the workspace tree and the tab titles, so one name cannot look like another."""

from __future__ import annotations


def test_tree_and_tab_show_bidi_controls_in_names_as_escapes(window, app):
    folder = app.workspace.root / "a\u202eb"
    folder.mkdir()
    rel = "a\u202eb/invoice\u202egpj.exe.json"
    (app.workspace.root / rel).write_text('{"title": "x"}', "utf-8")
    window.tree_view.refresh()
    tree = window.tree_view.tree
    assert tree.item("a\u202eb", "text") == "a\\u202Eb/"
    assert tree.item(rel, "text") == "invoice\\u202Egpj.exe"
    window.open_thread(rel)
    window.root.update()
    assert window.notebook.tab(window.pages[rel], "text").strip() == "invoice\\u202Egpj.exe"

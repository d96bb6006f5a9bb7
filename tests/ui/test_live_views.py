"""Views follow the workspace and the registries through their change events, never a
snapshot taken when the view was built (issue 22, item 4)."""

from __future__ import annotations

from .conftest import open_tabs, pump_until


def test_the_tree_shows_a_thread_renamed_through_the_tabs_as_a_plugin_command_renames_it(window, app):
    open_tabs(window, app, "plan")
    window.tab_pages.rename_entry("plan.json", "[Draft] plan")  # what a staged plugin write with a new title does
    pump_until(window.root, lambda: window.tree_view.tree.exists("[Draft] plan.json"), timeout=10)
    assert not window.tree_view.tree.exists("plan.json")


def test_the_tree_shows_threads_created_and_removed_by_other_parts_of_the_app(window, app):
    rel = app.workspace.create_thread("", "from-elsewhere")  # Open as thread, a fork, an import …
    pump_until(window.root, lambda: window.tree_view.tree.exists(rel), timeout=10)
    app.workspace.delete(rel)
    pump_until(window.root, lambda: not window.tree_view.tree.exists(rel), timeout=10)

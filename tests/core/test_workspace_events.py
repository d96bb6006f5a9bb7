"""Workspace change events (llmspace/core/workspace.py): a listener hears every thread or
folder created, renamed or moved, removed and saved, in order, and stops hearing them once
it unsubscribed; an unchanged save is not an event."""

from __future__ import annotations

from pathlib import Path

from llmspace.core.workspace import Workspace, WorkspaceChange


def test_listeners_hear_created_renamed_removed_and_saved_until_they_unsubscribe(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws", trash_dir=tmp_path / "trash", use_os_trash=False)
    ws.root.mkdir()
    heard: list[WorkspaceChange] = []
    unsubscribe = ws.subscribe(heard.append)
    rel = ws.create_thread("", "plan")
    thread = ws.open(rel)
    assert ws.save(rel, thread) is False  # unchanged: no event
    thread.context.system_prompt = "be brief"
    ws.save(rel, thread)
    renamed = ws.rename(rel, "[Draft] plan")
    folder = ws.create_folder("", "archive")
    moved = ws.move(renamed, folder)
    copy = ws.duplicate(moved)
    ws.delete(copy)
    kinds = [(c.kind, c.rel, c.old) for c in heard if c.kind != "saved"]
    assert kinds == [("created", "plan.json", ""), ("renamed", "[Draft] plan.json", "plan.json"),
                     ("created", "archive", ""), ("renamed", "archive/[Draft] plan.json", "[Draft] plan.json"),
                     ("created", "archive/[Draft] plan_copy.json", ""), ("removed", "archive/[Draft] plan_copy.json", "")]
    assert ("saved", "plan.json", "") in [(c.kind, c.rel, c.old) for c in heard]
    unsubscribe()
    ws.create_thread("", "later")
    assert heard[-1].kind == "removed"

"""Workspace surprises: symlinked threads, hidden names, over-long and non-Unicode names,
stale temp files, values that cannot be saved."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from llmspace.core.names import validate_stem
from llmspace.core.threadio import serialize_thread, thread_from_data
from llmspace.core.workspace import Workspace
from llmspace.errors import InvalidName, UserFacingError


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "workspace"
    root.mkdir()
    return Workspace(root, trash_dir=tmp_path / ".trash", use_os_trash=False)


def _thread_bytes(title: str, text: str = "hi") -> bytes:
    return serialize_thread(thread_from_data(
        {"title": title, "context": {"messages": [{"id": "m1", "role": "user", "content": [{"type": "text", "text": text}]}]}}))


def test_saving_a_thread_through_a_symlink_inside_the_workspace_writes_through_and_keeps_the_link(ws: Workspace):
    (ws.root / "real").mkdir()
    (ws.root / "real" / "plan.json").write_bytes(_thread_bytes("plan"))
    link = ws.root / "plan-link.json"
    link.symlink_to(Path("real") / "plan.json")
    thread = ws.open("plan-link.json")
    thread.context.messages[0].content[0].text = "changed"
    assert ws.save("plan-link.json", thread) is True
    assert link.is_symlink() and os.readlink(link) == os.path.join("real", "plan.json")
    again = ws.open("real/plan.json")
    assert again.context.messages[0].content[0].text == "changed"
    assert sorted(os.listdir(ws.root / "real")) == ["plan.json"]


def test_a_workspace_scan_removes_stale_temp_files_and_never_lists_them(ws: Workspace):
    (ws.root / "f").mkdir()
    (ws.root / "f" / "t.json").write_bytes(_thread_bytes("t"))
    for folder in (ws.root, ws.root / "f"):
        (folder / ".t.json.ab12cd34.tmp").write_bytes(b'{"half"')
    (ws.root / ".keep.me").write_bytes(b"not ours")
    tree = ws.list_tree()
    assert [(e.rel, [c.rel for c in e.children or []]) for e in tree] == [("f", ["f/t.json"])]
    assert sorted(os.listdir(ws.root)) == [".keep.me", "f"] and os.listdir(ws.root / "f") == ["t.json"]


def test_a_value_that_cannot_be_saved_names_the_thread_and_the_json_path_and_keeps_the_file(ws: Workspace):
    (ws.root / "t.json").write_bytes(_thread_bytes("t"))
    before = (ws.root / "t.json").read_bytes()
    thread = ws.open("t.json")
    thread.context.messages[0].content[0].text = "pasted \ud83d half an emoji"
    with pytest.raises(UserFacingError) as info:
        ws.save("t.json", thread)
    text = str(info.value)
    assert text.startswith("t.json: cannot save the value at context.messages[0].content[0].text:")
    assert "lone surrogate \\ud83d" in text and "previous file was kept" in text
    assert (ws.root / "t.json").read_bytes() == before and os.listdir(ws.root) == ["t.json"]


@pytest.mark.parametrize(("name", "why"), [
    (".hidden", "starts with a dot, so it would be hidden"),
    ("x" * 201, "at most 200 bytes"),
    ("é" * 101, "at most 200 bytes"),
    ("bad\udcff", "not valid Unicode"),
])
def test_names_that_would_hide_break_or_overflow_a_file_name_are_refused(ws: Workspace, name: str, why: str):
    with pytest.raises(InvalidName, match=why):
        validate_stem(name)
    with pytest.raises(InvalidName, match=why):
        ws.create_thread("", name)
    assert os.listdir(ws.root) == []
    assert validate_stem("x" * 200) == "x" * 200 and validate_stem("a.b") == "a.b"


def test_threads_are_not_created_in_hidden_folders(ws: Workspace):
    (ws.root / ".trash").mkdir()
    for folder in (".trash", ".new", "ok/.inner"):
        with pytest.raises(InvalidName, match="starts with a dot, so threads in it would be hidden"):
            ws.create_thread(folder, "t")
    assert os.listdir(ws.root) == [".trash"] and os.listdir(ws.root / ".trash") == []


def test_a_named_pipe_in_the_workspace_is_refused_when_opened_or_duplicated(ws: Workspace):
    os.mkfifo(ws.root / "pipe.json")
    # The file is opened without blocking, so these return at once even though no writer exists.
    with pytest.raises(UserFacingError, match=r"pipe.json is a named pipe \(FIFO\), not a regular file"):
        ws.open("pipe.json")
    with pytest.raises(UserFacingError, match="named pipe"):
        ws.duplicate("pipe.json")
    assert [e.rel for e in ws.list_tree()] == ["pipe.json"]

"""A thread file nested 255-1,024 levels deep opens (the costly depth check is skipped on the
thread-open path) and saving it is refused with the JSON path, leaving the file unchanged;
deeper than 1,024 levels is refused when it is opened."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.core.workspace import Workspace
from llmspace.errors import UserFacingError


def test_a_thread_nested_300_levels_opens_and_saving_it_names_the_path_and_writes_nothing(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, use_os_trash=False)
    raw = ('{"title": "deep", "extra": {"x": ' + "[" * 300 + "]" * 300 + "}}").encode()
    (tmp_path / "deep.json").write_bytes(raw)
    thread = ws.open("deep.json")
    thread.title = "changed"
    with pytest.raises(UserFacingError, match=r"extra\.x\[0\]\[0\].*nested more than 254 levels"):
        ws.save("deep.json", thread)
    assert (tmp_path / "deep.json").read_bytes() == raw
    assert [p.name for p in tmp_path.iterdir()] == ["deep.json"]


def test_a_thread_nested_more_than_1024_levels_is_refused_when_opened(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, use_os_trash=False)
    (tmp_path / "deep.json").write_text('{"title": "deep", "extra": {"x": ' + "[" * 1100 + "]" * 1100 + "}}")
    with pytest.raises(UserFacingError, match=r"deep\.json: unsupported JSON at extra\.x\[0\]\[0\]"):
        ws.open("deep.json")

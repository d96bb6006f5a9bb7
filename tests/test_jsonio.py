"""The one atomic writer and the located JSON reader."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from llmspace import jsonio, temp_files
from llmspace.errors import MalformedJsonError, UserFacingError
from llmspace.jsonio import dumps_pretty, loads_located, read_json, write_bytes_atomic, write_json_atomic


def test_pretty_json_is_two_space_indented_keeps_non_ascii_and_key_order():
    assert dumps_pretty({"b": 1, "a": ["é", "数据"], "e": {}, "l": []}) == \
        '{\n  "b": 1,\n  "a": [\n    "é",\n    "数据"\n  ],\n  "e": {},\n  "l": []\n}'.encode()
    assert dumps_pretty({"title": "New thread"}) == b'{\n  "title": "New thread"\n}'
    assert dumps_pretty({"x": 1}, trailing_newline=True).endswith(b"}\n")
    assert dumps_pretty({"big": 2**70}) == b'{\n  "big": 1180591620717411303424\n}'


def test_atomic_write_creates_folders_and_replaces_content(tmp_path: Path):
    target = tmp_path / "a" / "b" / "t.json"
    write_json_atomic(target, {"v": 1})
    write_json_atomic(target, {"v": 2}, trailing_newline=True)
    assert target.read_bytes() == b'{\n  "v": 2\n}\n'
    assert [p.name for p in target.parent.iterdir()] == ["t.json"]


def test_atomic_write_keeps_the_file_mode(tmp_path: Path):
    target = tmp_path / "secret.json"
    target.write_bytes(b"{}")
    os.chmod(target, 0o600)
    write_bytes_atomic(target, b"[]")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and target.read_bytes() == b"[]"


@pytest.mark.parametrize("broken", ["fsync", "replace"])
def test_a_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path: Path, monkeypatch, broken: str):
    target = tmp_path / "t.json"
    target.write_bytes(b"old")

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(jsonio.os, broken, fail)
    with pytest.raises(UserFacingError, match="No space left on device") as info:
        write_bytes_atomic(target, b"new")
    assert "previous file was kept" in str(info.value)
    monkeypatch.undo()
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["t.json"]


def test_an_interrupted_write_is_cleaned_up_and_re_raised(tmp_path: Path, monkeypatch):
    target = tmp_path / "t.json"

    def interrupt(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(jsonio.os, "fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_bytes_atomic(target, b"new")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_malformed_json_names_path_line_and_column(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{\n  "a": 1,\n  "b": ,\n}')
    with pytest.raises(MalformedJsonError) as info:
        read_json(bad)
    assert (info.value.line, info.value.column) == (3, 8)
    assert str(bad) in str(info.value) and "line 3, column 8" in str(info.value)


def test_non_utf8_is_reported_with_its_position():
    with pytest.raises(MalformedJsonError) as info:
        loads_located(b'{"a":\n "\xff"}', "x.json")
    assert info.value.line == 2 and "UTF-8" in info.value.reason


def test_a_utf8_bom_is_accepted():
    assert loads_located('\ufeff{"a": 1}'.encode()) == {"a": 1}


def test_reading_missing_files_and_folders_gives_clear_errors(tmp_path: Path):
    with pytest.raises(UserFacingError, match="does not exist"):
        read_json(tmp_path / "nope.json")
    with pytest.raises(UserFacingError, match="is a folder"):
        read_json(tmp_path)


@pytest.mark.parametrize("broken", ["mkstemp", "mkdir"])
def test_a_read_only_folder_gives_a_clear_error_and_keeps_the_old_file(tmp_path: Path, monkeypatch, broken: str):
    target = tmp_path / "sub" / "t.json"
    target.parent.mkdir()
    target.write_bytes(b"old")

    def fail(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    if broken == "mkstemp":
        monkeypatch.setattr(temp_files.tempfile, "mkstemp", fail)
    else:
        monkeypatch.setattr(jsonio.Path, "mkdir", fail)
    with pytest.raises(UserFacingError, match="Permission denied") as info:
        write_bytes_atomic(target, b"new")
    assert str(target) in str(info.value) and "previous file was kept" in str(info.value)
    monkeypatch.undo()
    assert target.read_bytes() == b"old" and [p.name for p in target.parent.iterdir()] == ["t.json"]


def test_a_failed_first_write_says_nothing_was_written(tmp_path: Path, monkeypatch):
    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(jsonio.os, "replace", fail)
    with pytest.raises(UserFacingError, match="nothing was written"):
        write_bytes_atomic(tmp_path / "new.json", b"{}")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_a_file_written_into_an_owner_only_folder_is_owner_only_new_or_rewritten(tmp_path: Path):
    private = tmp_path / "private"
    private.mkdir()
    private.chmod(0o700)
    jsonio.write_json_atomic(private / "new.json", {"key": "secret"})
    assert stat.S_IMODE((private / "new.json").stat().st_mode) == 0o600
    older = private / "older.json"
    older.write_text("{}")
    older.chmod(0o644)
    jsonio.write_json_atomic(older, {"key": "secret"})
    assert stat.S_IMODE(older.stat().st_mode) == 0o600
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    jsonio.write_json_atomic(shared / "new.json", {})
    assert stat.S_IMODE((shared / "new.json").stat().st_mode) == 0o644

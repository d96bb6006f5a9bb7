"""The safe reader and the JSON limits of `llmspace.jsonio`, and the temp-file sweeping of
`llmspace.temp_files`."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from llmspace import jsonio
from llmspace.errors import MalformedJsonError, UserFacingError
from llmspace.jsonio import (
    SETTINGS_MAX_BYTES,
    UnreadableFileError,
    UnsavableValueError,
    UnsupportedJsonError,
    dumps_pretty,
    loads_located,
    read_file_bytes,
    read_json,
    write_bytes_atomic,
    write_json_atomic,
)
from llmspace.temp_files import is_temp_name, remove_stale_temp, sweep_stale_temps

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="named pipes, devices and flock are POSIX")

REPO = Path(__file__).resolve().parents[1]


def _read_in_child(path: Path, reader: str = "read_json") -> subprocess.CompletedProcess[str]:
    """Run the reader in a subprocess, so that a hang fails the test instead of blocking it."""
    code = (f"from llmspace.jsonio import {reader}\n"
            f"from llmspace.errors import UserFacingError\n"
            f"try:\n    {reader}({str(path)!r})\nexcept UserFacingError as e:\n    print(e)\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20, cwd=REPO)


# -- the safe reader ------------------------------------------------------------------------
def test_a_named_pipe_is_refused_at_once_instead_of_hanging(tmp_path: Path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    for reader in ("read_json", "read_file_bytes"):
        done = _read_in_child(fifo, reader)
        assert done.returncode == 0, done.stderr
        assert f"{fifo} is a named pipe (FIFO), not a regular file; it was not read." in done.stdout


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_devices_are_refused_before_anything_is_read(device: str):
    with pytest.raises(UnreadableFileError, match="is a character device, not a regular file") as info:
        read_file_bytes(device)
    assert info.value.reason == "it is a character device, not a regular file"


def test_a_file_over_the_cap_is_refused_with_its_size_limit(tmp_path: Path):
    big = tmp_path / "big.json"
    big.write_bytes(b"[" + b"1," * 600 + b"1]")
    with pytest.raises(UnreadableFileError, match="larger than 1,000 bytes"):
        read_file_bytes(big, max_bytes=1000)
    assert read_file_bytes(big, max_bytes=1203) == big.read_bytes()
    huge = tmp_path / "settings.json"
    with open(huge, "wb") as f:
        f.truncate(SETTINGS_MAX_BYTES + 1)  # sparse: nothing is written, nothing is read
    with pytest.raises(UnreadableFileError, match="larger than 8 MB"):
        read_json(huge, max_bytes=SETTINGS_MAX_BYTES)


def test_folders_missing_files_and_symlinks(tmp_path: Path):
    with pytest.raises(UnreadableFileError, match="is a folder, not a file"):
        read_file_bytes(tmp_path)
    with pytest.raises(UnreadableFileError, match="does not exist") as info:
        read_file_bytes(tmp_path / "nope" / "x.json")
    assert info.value.missing
    (tmp_path / "real.json").write_bytes(b"{}")
    (tmp_path / "link.json").symlink_to("real.json")
    assert read_json(tmp_path / "link.json") == {}


# -- what JSON the app keeps -----------------------------------------------------------------
@pytest.mark.parametrize("levels", [255, 300, 1_000, 1_025, 100_000])
def test_json_nested_too_deeply_is_reported_with_its_json_path(levels: int):
    data = b'{"context": {"tools": [' + b"[" * levels + b"]" * levels + b"]}}"
    with pytest.raises(UnsupportedJsonError) as info:
        loads_located(data, "t.json")
    text = str(info.value)
    assert text.startswith("t.json: unsupported JSON at context.tools[0][0]")
    assert "nested more than 254 levels deep" in text and "left unchanged" in text


def test_json_nested_254_levels_is_read_and_written_back_unchanged(tmp_path: Path):
    data = b"[" * 254 + b"]" * 254
    value = loads_located(data)
    write_json_atomic(tmp_path / "deep.json", value)
    assert read_json(tmp_path / "deep.json") == value


@pytest.mark.parametrize(("data", "where", "what"), [
    (b'{"m": [{"text": "ok \\ud800"}]}', "m[0].text", "lone surrogate \\ud800"),
    (b'{"m": {"\\udc00": 1}}', "m", "a key with text that is not valid Unicode"),
    (b'\xef\xbb\xbf{"a": "\\udfff"}', "a", "lone surrogate \\udfff"),
    (b'{"n": [1, 1' + b"0" * 5000 + b"]}", "n[1]", "more than 4,300 digits"),
])
def test_values_the_app_cannot_keep_are_reported_with_their_json_path(data: bytes, where: str, what: str):
    with pytest.raises(UnsupportedJsonError) as info:
        loads_located(data, "x.json")
    assert info.value.json_path == where and what in str(info.value)
    assert isinstance(info.value, MalformedJsonError)  # callers that handle malformed files handle these


def test_what_the_stdlib_alone_reads_is_still_read():
    assert loads_located(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}
    assert loads_located(b'{"n": 1' + b"0" * 400 + b"}") == {"n": 10 ** 400}


# -- what the writer refuses -----------------------------------------------------------------
@pytest.mark.parametrize(("value", "where", "what"), [
    ({"servers": [{"command": "\ud800"}]}, "servers[0].command", "lone surrogate \\ud800"),
    ({"path": "/tmp/\udcff"}, "path", "the byte \\xff that is not UTF-8"),
    ({"k\udce9": 1}, "(root)", "a key with text"),
])
def test_text_that_is_not_unicode_is_refused_by_the_writer_and_nothing_is_written(tmp_path: Path, value, where, what):
    target = tmp_path / "s.json"
    with pytest.raises(UnsavableValueError) as info:
        write_json_atomic(target, value)
    text = str(info.value)
    assert text.startswith(f"{target}: cannot save the value at {where}:") and what in text
    assert "nothing was written" in text and list(tmp_path.iterdir()) == []
    target.write_bytes(b"{}")
    with pytest.raises(UnsavableValueError, match="previous file was kept"):
        write_json_atomic(target, value)
    assert target.read_bytes() == b"{}" and [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_the_writer_refuses_what_the_reader_would_refuse():
    deep: list = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(UnsavableValueError, match="nested more than 254 levels"):
        dumps_pretty({"a": deep})
    with pytest.raises(UserFacingError, match="4,300 digits"):
        dumps_pretty({"n": _huge_int()})
    assert dumps_pretty({"n": 2 ** 70}) == b'{\n  "n": 1180591620717411303424\n}'


def _huge_int() -> int:
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return int("1" + "0" * 5000)
    finally:
        sys.set_int_max_str_digits(old)


def test_a_symlinked_file_is_written_through_and_the_link_kept(tmp_path: Path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "models.json").write_bytes(b"{}")
    link = tmp_path / "models.json"
    link.symlink_to("real/models.json")
    write_json_atomic(link, {"v": 1})
    assert link.is_symlink() and (tmp_path / "real" / "models.json").read_bytes() == b'{\n  "v": 1\n}'


def test_a_name_near_the_file_system_limit_can_still_be_saved(tmp_path: Path):
    target = tmp_path / ("é" * 120 + ".json")  # 245 bytes: the temp file's name must be shortened
    write_bytes_atomic(target, b"{}")
    write_bytes_atomic(target, b"[]")
    assert [p.name for p in tmp_path.iterdir()] == [target.name] and target.read_bytes() == b"[]"


# -- temp files of killed writers ------------------------------------------------------------
def _stale_temp(folder: Path, name: str, suffix: str = "abcd1234") -> Path:
    tmp = folder / f".{name}.{suffix}.tmp"
    tmp.write_bytes(b'{"half": ')
    return tmp


def test_temp_names_are_recognised():
    assert is_temp_name(".big.json.k2j_x9a0.tmp") and is_temp_name("..llmspace-seeded.abcdefgh.tmp")
    assert not is_temp_name("big.json.abcdefgh.tmp") and not is_temp_name(".big.json.tmp")
    assert not is_temp_name(".notes.ABCDEFGH.tmp")


def test_the_next_save_in_a_folder_removes_its_stale_temp_files(tmp_path: Path):
    stale = [_stale_temp(tmp_path, "t.json", s) for s in ("aaaaaaaa", "b_c0d1e2")]
    stale.append(_stale_temp(tmp_path, "other.json"))
    write_bytes_atomic(tmp_path / "t.json", b"{}")
    assert not any(p.exists() for p in stale)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


def test_saves_sweep_a_folder_at_most_every_30_seconds_and_a_scan_always_does(tmp_path: Path):
    # a bulk import saves thousands of files into one folder: listing it on every save was quadratic
    write_bytes_atomic(tmp_path / "a.json", b"{}")
    later = _stale_temp(tmp_path, "a.json")
    write_bytes_atomic(tmp_path / "b.json", b"{}")
    assert later.exists()
    assert sweep_stale_temps(tmp_path) == 1 and not later.exists()


def test_a_temp_file_a_live_writer_holds_is_never_removed(tmp_path: Path):
    held = _stale_temp(tmp_path, "t.json")
    code = (f"import fcntl, os, sys\nfd = os.open({str(held)!r}, os.O_RDONLY)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\nsys.stdin.read()\n")
    # another process holds the lock, as a writer does while it writes
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert remove_stale_temp(held) is False
        write_bytes_atomic(tmp_path / "t.json", b"{}")
        assert sweep_stale_temps(tmp_path) == 0 and held.exists()
    finally:
        holder.communicate("", timeout=20)
    assert sweep_stale_temps(tmp_path) == 1 and not held.exists()


def test_the_writer_keeps_its_temp_file_locked_until_it_is_renamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    target = tmp_path / "t.json"
    seen: list[bool] = []
    real_fsync = os.fsync

    def look(fd: int) -> None:  # while the data is being written: the temp file is held
        real_fsync(fd)
        temp = next(p for p in tmp_path.iterdir() if is_temp_name(p.name))
        probe = os.open(temp, os.O_RDONLY)
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append(False)
        except BlockingIOError:
            seen.append(True)
        finally:
            os.close(probe)
        seen.append(remove_stale_temp(temp))

    monkeypatch.setattr(jsonio.os, "fsync", look)  # a spy: the real fsync still runs
    write_bytes_atomic(target, b"{}")
    monkeypatch.undo()
    assert seen == [True, False] and target.read_bytes() == b"{}"


def test_a_special_file_named_like_a_temp_file_is_left_alone(tmp_path: Path):
    fifo = tmp_path / ".t.json.abcdefgh.tmp"
    os.mkfifo(fifo)
    assert sweep_stale_temps(tmp_path) == 0 and fifo.exists()

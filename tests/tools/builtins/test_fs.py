"""The file-system built-ins on a temporary directory: read, write, edit, ls, tree, glob,
present_files (`tools/builtins/fs.py`)."""

from __future__ import annotations

import os
from pathlib import Path

from llmspace.tools.builtins.fs import READ_CAP_BYTES

from ..conftest import Runner


def _touch(path: Path, mtime: float, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text(text)
    os.utime(path, (mtime, mtime))
    return path


# -- read ------------------------------------------------------------------------------------


def test_read_numbers_every_line_with_a_tab(run: Runner) -> None:
    (run.cwd / "a.txt").write_text("one\ntwo\nthree")
    assert run.ok("read", path="a.txt") == "1\tone\n2\ttwo\n3\tthree"


def test_read_offset_and_limit_keep_real_line_numbers(run: Runner) -> None:
    (run.cwd / "a.txt").write_text("\n".join(f"line{i}" for i in range(1, 11)))
    assert run.ok("read", path="a.txt", offset=4, limit=2) == "4\tline4\n5\tline5"
    assert run.ok("read", path="a.txt", offset=9) == "9\tline9\n10\tline10"


def test_read_caps_output_at_256_kib_with_the_marker(run: Runner) -> None:
    line = "x" * 99  # 100 bytes with the newline, plus the "N\t" prefix
    (run.cwd / "big.txt").write_text("\n".join(line for _ in range(5000)))
    text = run.ok("read", path="big.txt")
    body, marker = text.rsplit("\n... ", 1)
    assert marker == f"[truncated at {READ_CAP_BYTES} bytes; pass offset/limit to read a specific range]"
    assert len(body.encode()) + 1 <= READ_CAP_BYTES
    kept = body.split("\n")
    assert kept[0] == f"1\t{line}" and len(kept) < 5000
    assert kept[-1].startswith(f"{len(kept)}\t")


def test_read_always_keeps_the_first_line_even_past_the_cap(run: Runner) -> None:
    (run.cwd / "huge.txt").write_text("y" * (READ_CAP_BYTES + 10) + "\nsecond")
    text = run.ok("read", path="huge.txt")
    assert text.startswith("1\tyyy")
    assert text.endswith("pass offset/limit to read a specific range]")
    assert "second" not in text


def test_read_of_a_directory_is_an_error(run: Runner) -> None:
    (run.cwd / "d").mkdir()
    assert run.err("read", path="d") == f"{run.cwd / 'd'} is a directory, not a file."


def test_read_of_an_image_reports_its_size(run: Runner) -> None:
    (run.cwd / "pic.PNG").write_bytes(b"\x89PNG" + b"\0" * 96)
    assert run.ok("read", path="pic.PNG") == f"[image file: {run.cwd / 'pic.PNG'} (100 bytes)]"


def test_read_of_a_missing_file_is_an_error(run: Runner) -> None:
    assert "does not exist" in run.err("read", path="nope.txt")


def test_read_expands_home(run: Runner, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(run.cwd))
    (run.cwd / "h.txt").write_text("home")
    assert run.ok("read", path="~/h.txt") == "1\thome"


# -- write / edit --------------------------------------------------------------------------------


def test_write_creates_parents_and_reports_utf8_bytes(run: Runner) -> None:
    text = run.ok("write", path="deep/er/f.txt", contents="héllo")
    target = run.cwd / "deep" / "er" / "f.txt"
    assert text == f"Wrote 6 bytes to {target}"
    assert target.read_text(encoding="utf-8") == "héllo"


def test_write_overwrites(run: Runner) -> None:
    (run.cwd / "f.txt").write_text("old content")
    run.ok("write", path="f.txt", contents="new")
    assert (run.cwd / "f.txt").read_text() == "new"


def test_edit_replaces_a_unique_string(run: Runner) -> None:
    f = run.cwd / "e.txt"
    f.write_text("alpha beta gamma")
    assert run.ok("edit", path="e.txt", old_string="beta", new_string="BETA") == f"Replaced 1 occurrence(s) in {f}"
    assert f.read_text() == "alpha BETA gamma"


def test_edit_errors_use_the_reference_messages(run: Runner) -> None:
    f = run.cwd / "e.txt"
    f.write_text("a a a")
    assert run.err("edit", path="e.txt", old_string="a", new_string="a") == "new_string must differ from old_string."
    assert run.err("edit", path="e.txt", old_string="zzz", new_string="y") == "old_string was not found in the file."
    assert run.err("edit", path="e.txt", old_string="a", new_string="b") == (
        "old_string is not unique (3 matches). Provide a larger unique string or set replace_all."
    )
    assert f.read_text() == "a a a"


def test_edit_replace_all_and_empty_new_string(run: Runner) -> None:
    f = run.cwd / "e.txt"
    f.write_text("a-a-a")
    assert run.ok("edit", path="e.txt", old_string="a", new_string="", replace_all=True) == f"Replaced 3 occurrence(s) in {f}"
    assert f.read_text() == "--"


# -- ls / tree --------------------------------------------------------------------------------------


def test_ls_sorts_newest_first_marks_folders_and_skips_noise(run: Runner) -> None:
    _touch(run.cwd / "old.txt", 1_000_000)
    _touch(run.cwd / "new.txt", 3_000_000)
    (run.cwd / "mid").mkdir()
    os.utime(run.cwd / "mid", (2_000_000, 2_000_000))
    for noise in ("node_modules", ".git", "__pycache__", ".venv"):
        (run.cwd / noise).mkdir()
    _touch(run.cwd / ".DS_Store", 4_000_000)
    _touch(run.cwd / ".hidden", 500_000)
    assert run.ok("ls", path=".") == "new.txt\nmid/\nold.txt\n.hidden"


def test_ls_of_an_empty_folder_says_so(run: Runner) -> None:
    (run.cwd / "empty").mkdir()
    (run.cwd / "empty" / "node_modules").mkdir()
    assert run.ok("ls", path="empty") == f"{run.cwd / 'empty'} is empty."


def test_ls_of_a_file_is_an_error(run: Runner) -> None:
    (run.cwd / "f").write_text("")
    assert run.err("ls", path="f").endswith("is not a directory.")


def test_tree_draws_folders_first_with_box_connectors(run: Runner) -> None:
    (run.cwd / "src" / "pkg").mkdir(parents=True)
    (run.cwd / "src" / "pkg" / "m.py").write_text("")
    (run.cwd / "src" / "a.py").write_text("")
    (run.cwd / "README.md").write_text("")
    (run.cwd / "build").mkdir()
    (run.cwd / ".git").mkdir()
    assert run.ok("tree", path=".") == "\n".join(
        [
            str(run.cwd),
            "├── src",
            "│   ├── pkg",
            "│   │   └── m.py",
            "│   └── a.py",
            "└── README.md",
        ]
    )


def test_tree_respects_max_depth_and_does_not_follow_symlinked_folders(run: Runner) -> None:
    (run.cwd / "a" / "b" / "c").mkdir(parents=True)
    (run.cwd / "a" / "b" / "c" / "deep.txt").write_text("")
    (run.cwd / "link").symlink_to(run.cwd / "a")
    text = run.ok("tree", path=".", max_depth=2)
    assert text.split("\n") == [str(run.cwd), "├── a", "│   └── b", "└── link"]
    # 0 or less means the default (5); very large is capped at 20
    assert "deep.txt" in run.ok("tree", path=".", max_depth=0)
    assert "deep.txt" in run.ok("tree", path=".", max_depth=1000)


def test_tree_of_an_empty_folder_and_of_a_file(run: Runner) -> None:
    (run.cwd / "e").mkdir()
    assert run.ok("tree", path="e") == f"{run.cwd / 'e'} is empty."
    (run.cwd / "f").write_text("")
    assert run.err("tree", path="f").endswith("is not a directory.")


# -- glob -----------------------------------------------------------------------------------------------


def test_glob_returns_absolute_paths_newest_first_with_dot_files_and_without_noise(run: Runner) -> None:
    a = _touch(run.cwd / "a.py", 1_000_000)
    b = _touch(run.cwd / "pkg" / "b.py", 3_000_000)
    c = _touch(run.cwd / ".tool" / "c.py", 2_000_000)
    _touch(run.cwd / "node_modules" / "x.py", 9_000_000)
    _touch(run.cwd / "pkg" / "__pycache__" / "b.py", 9_000_000)
    _touch(run.cwd / "notes.txt", 9_000_000)
    assert run.ok("glob", glob_pattern="**/*.py") == "\n".join(str(p) for p in (b, c, a))
    assert run.ok("glob", glob_pattern="*.py") == str(a)
    assert run.ok("glob", glob_pattern="**/*.{py,txt}").split("\n")[0] == str(run.cwd / "notes.txt")


def test_glob_with_a_target_directory_and_no_match(run: Runner) -> None:
    _touch(run.cwd / "sub" / "x.md", 1_000_000)
    assert run.ok("glob", glob_pattern="*.md", target_directory="sub") == str(run.cwd / "sub" / "x.md")
    assert run.ok("glob", glob_pattern="*.rs") == "No files matched."


def test_glob_with_an_absolute_pattern(run: Runner) -> None:
    f = _touch(run.cwd / "abs" / "y.cfg", 1_000_000)
    assert run.ok("glob", glob_pattern=str(run.cwd / "abs" / "*.cfg")) == str(f)


# -- present_files -------------------------------------------------------------------------------------


def test_present_files_opens_html_and_reveals_other_files(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []
    work = tmp_path
    r = Runner(work, opener=lambda action, path: seen.append((action, path)))
    (work / "page.html").write_text("<p>hi</p>")
    (work / "data.csv").write_text("a,b")
    assert r.ok("present_files", paths=["page.html", "data.csv"]) == "OK"
    assert seen == [("open", str(work / "page.html")), ("reveal", str(work / "data.csv"))]


def test_present_files_rejects_missing_files_and_empty_lists(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []
    r = Runner(tmp_path, opener=lambda action, path: seen.append((action, path)))
    assert "does not exist" in r.err("present_files", paths=["ghost.html"])
    assert "paths" in r.err("present_files", paths=[])
    assert seen == []


def test_read_splits_like_javascript(run: Runner) -> None:
    (run.cwd / "nl.txt").write_text("a\nb\n")
    assert run.ok("read", path="nl.txt") == "1\ta\n2\tb\n3\t"
    (run.cwd / "empty.txt").write_text("")
    assert run.ok("read", path="empty.txt") == "1\t"
    assert run.ok("read", path="nl.txt", offset=3) == "3\t"
    assert run.ok("read", path="nl.txt", offset=2, limit=1) == "2\tb"
    assert run.ok("read", path="nl.txt", offset=9) == ""

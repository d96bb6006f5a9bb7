"""`llmspace threads new|examples|seed` create threads through the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.cli import main


def test_seed_writes_the_examples_once(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["threads", "seed"]) == 0
    first = capsys.readouterr().out.split()
    assert "general-agent.json" in first
    assert (home / "workspace" / "general-agent.json").is_file()
    assert main(["threads", "seed"]) == 0
    assert "nothing seeded" in capsys.readouterr().out


def test_new_from_an_example_goes_into_the_folder_with_the_example_name(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["threads", "new", "--example", "custom-function-tool", "--folder", "demo"]) == 0
    assert capsys.readouterr().out.strip() == "demo/custom-function-tool.json"
    assert (home / "workspace" / "demo" / "custom-function-tool.json").is_file()


def test_new_blank_threads_get_untitled_names(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["threads", "new"])
    main(["threads", "new"])
    assert capsys.readouterr().out.split() == ["untitled.json", "untitled-1.json"]


def test_unknown_example_is_a_clear_error(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["threads", "new", "--example", "nope"]) == 1
    assert "threads examples" in capsys.readouterr().err


def test_an_absolute_folder_is_refused_not_made_relative(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "elsewhere"
    assert main(["threads", "new", "--folder", str(outside)]) == 1
    assert "absolute path" in capsys.readouterr().err
    assert not outside.exists() and list((home / "workspace").rglob("*.json")) == []
    assert main(["threads", "list", str(outside)]) == 1


def test_a_new_folder_with_reserved_characters_is_refused(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["threads", "new", "--folder", "a?b"]) == 1
    assert "'?'" in capsys.readouterr().err
    assert not (home / "workspace" / "a?b").exists()



def test_a_name_given_with_the_json_suffix_is_not_doubled(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["threads", "new", "--name", "notes.json"]) == 0
    assert capsys.readouterr().out.strip() == "notes.json"


def test_threads_list_shows_bidi_controls_in_names_on_disk_as_escapes(home: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    folder = home / "workspace" / "a\u202eb"
    folder.mkdir(parents=True)
    (folder / "invoice\u202egpj.exe.json").write_text('{"title": "x"}', "utf-8")
    assert main(["threads", "list"]) == 0
    out = capsys.readouterr().out
    assert "\u202e" not in out
    assert out.splitlines() == ["a\\u202Eb/", "  invoice\\u202Egpj.exe  (a\\u202Eb/invoice\\u202Egpj.exe.json)"]

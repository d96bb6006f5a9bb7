"""`llmspace plugins check DIR`: one line per checklist item, exit 1 when one fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.cli import main

from .test_check import bad_plugin, good_plugin


def test_check_of_a_good_plugin_prints_every_item_and_exits_0(home: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins", "check", str(good_plugin(tmp_path))]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 16 and all(line.startswith("PASS  ") for line in lines[:-1])
    assert lines[-1] == "All 15 checks passed."
    assert "PASS  code" in lines[12] and "load and meet their contracts" in lines[12]


def test_check_of_a_bad_plugin_exits_1(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins", "check", str(bad_plugin(tmp_path))]) == 1
    out = capsys.readouterr().out
    assert "FAIL  name" in out and "FAIL  secrets" in out and out.splitlines()[-1] == "10 of 12 checks failed."
    assert "hunter2" not in out


def test_check_of_a_missing_folder_says_so(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins", "check", str(tmp_path / "nope")]) == 1
    assert "is not a folder" in capsys.readouterr().err


def test_check_loads_javascript_tools_in_the_js_host_too(home: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    if not (shutil.which("bun") or shutil.which("node")):
        pytest.skip("no JavaScript runtime on PATH")
    root = tmp_path / "js-kit"
    (root / "tools").mkdir(parents=True)
    (root / "package.json").write_text('{"name": "js-kit", "version": "1.0.0", "engines": {"llm-space": ">=4.9.0"}}')
    (root / "tools" / "loose.mjs").write_text(
        'export default class Loose {\n  name = "LooseName";\n  description = "x";\n'
        '  parameters = {type: "object", properties: {}};\n  async execute() { return 1; }\n}\n')
    assert main(["plugins", "check", str(root)]) == 1
    out = capsys.readouterr().out
    assert "PASS  code" in out and "1 extension(s) load" in out
    assert "FAIL  tool names    not snake_case: LooseName" in out
    assert "FAIL  tool schemas  allow any property" in out


def test_check_of_a_plugin_for_another_app_version_exits_1(home: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    folder = good_plugin(tmp_path)
    manifest = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    manifest["engines"] = {"llm-space": "^5.0.0"}
    (folder / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["plugins", "check", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  engines" in out and out.splitlines()[-1] == "1 of 12 checks failed."

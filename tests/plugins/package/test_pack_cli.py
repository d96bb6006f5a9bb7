"""`llmspace plugins pack DIR [-o ZIP]`, `install ZIP…` and `remove NAME` through the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.cli import main

from ..zips import Entry, good_zip, manifest, plugin_entries, plugin_tree, write_zip


def test_pack_install_update_and_remove_from_the_command_line(home: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    folder = plugin_tree(tmp_path / "src" / "weather-kit", {"package.json": manifest("weather-kit", "1.2.3"),
                                                             "tools/now.py": "X = 1\n", "data/cache": "x"})
    out = tmp_path / "dist" / "kit.zip"
    assert main(["plugins", "pack", str(folder), "-o", str(out)]) == 0
    assert "Packed weather-kit 1.2.3: 2 files" in capsys.readouterr().out
    assert main(["plugins", "install", "--yes", str(out)]) == 0
    assert "Installed plugin weather-kit 1.2.3." in capsys.readouterr().out
    assert (home / "plugins" / "weather-kit" / "tools" / "now.py").is_file()
    assert not (home / "plugins" / "weather-kit" / "data").exists()

    (home / "data" / "plugins" / "weather-kit").mkdir(parents=True, exist_ok=True)  # made by its confined host
    assert main(["plugins", "install", "--yes", str(good_zip(tmp_path / "v2.zip", version="1.3.0"))]) == 0
    assert "Updated plugin weather-kit 1.2.3 → 1.3.0." in capsys.readouterr().out

    assert main(["plugins", "remove", "weather-kit"]) == 0
    printed = capsys.readouterr().out
    assert "Removed plugin weather-kit" in printed and "settings and data were kept" in printed
    assert not (home / "plugins" / "weather-kit").exists()
    assert (home / "data" / "plugins" / "weather-kit").is_dir()


def test_a_refused_zip_exits_1_naming_the_entry(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write_zip(tmp_path / "bad.zip", [*plugin_entries(), Entry("../escape", b"x")])
    assert main(["plugins", "install", "--yes", str(bad)]) == 1
    assert "bad.zip: entry '../escape': climbs out of the package with '..'" in capsys.readouterr().err
    assert not (tmp_path / "escape").exists()


def test_packing_a_folder_without_package_json_exits_1(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["plugins", "pack", str(tmp_path / "empty")]) == 1
    assert "package.json" in capsys.readouterr().err

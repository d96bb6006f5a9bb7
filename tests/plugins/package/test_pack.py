"""`pack DIR [-o ZIP]`: release ZIPs in the root layout of the plugin guide §4.1, with the
right files left out, deterministic bytes, and a round trip through the installer."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from llmspace.plugins.errors import PluginError
from llmspace.plugins.package.archive import Limits
from llmspace.plugins.package.install import install_zip
from llmspace.plugins.package.pack import pack, zip_name

from ..zips import manifest, plugin_tree


def plugin_folder(root: Path, name: str = "weather-kit") -> Path:
    folder = plugin_tree(root / name.split("/")[-1], {
        "package.json": manifest(name, "1.2.3"),
        "tools/now.py": "def now(): ...\n",
        "skills/forecast/SKILL.md": "---\nname: forecast\ndescription: Forecast.\n---\n",
        "servers/node_modules/dep/index.js": "module.exports = 1\n",
        "data/cache.db": "runtime state",
        ".git/HEAD": "ref: refs/heads/main\n",
        ".DS_Store": "x",
        "tools/.DS_Store": "x",
        "__MACOSX/._x": "x",
        "tools/._now.py": "x",
        "docs/data/table.md": "a nested data folder ships",
    })
    (folder / "bin").mkdir()
    (folder / "bin" / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(folder / "bin" / "run.sh", 0o755)
    return folder


def test_pack_writes_a_root_layout_zip_beside_the_folder_without_data_git_or_macos_files(tmp_path: Path) -> None:
    folder = plugin_folder(tmp_path)
    result = pack(folder)
    assert result.path == tmp_path / "weather-kit-1.2.3.zip"
    assert (result.name, result.version, result.files) == ("weather-kit", "1.2.3", 6)
    with zipfile.ZipFile(result.path) as zf:
        names = zf.namelist()
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
    assert names == ["bin/run.sh", "docs/data/table.md", "package.json", "servers/node_modules/dep/index.js",
                     "skills/forecast/SKILL.md", "tools/now.py"]
    assert modes["bin/run.sh"] == 0o100755 and modes["package.json"] == 0o100644
    assert "weather-kit 1.2.3: 6 files" in result.message


def test_packing_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    folder = plugin_folder(tmp_path)
    first = pack(folder, tmp_path / "a.zip").path.read_bytes()
    os.utime(folder / "tools" / "now.py", (0, 2_000_000_000))
    assert pack(folder, tmp_path / "b.zip").path.read_bytes() == first


def test_an_output_inside_the_folder_is_not_packed_into_itself(tmp_path: Path) -> None:
    folder = plugin_folder(tmp_path)
    out = folder / "dist" / "release.zip"
    pack(folder, out)
    result = pack(folder, out)
    with zipfile.ZipFile(result.path) as zf:
        assert not [n for n in zf.namelist() if n.startswith("dist/")]
    assert sorted(p.name for p in out.parent.iterdir()) == ["release.zip"]


def test_an_output_folder_gets_the_default_file_name(tmp_path: Path) -> None:
    folder = plugin_folder(tmp_path, "@example/team-tools")
    (tmp_path / "dist").mkdir()
    assert pack(folder, tmp_path / "dist").path == tmp_path / "dist" / "example-team-tools-1.2.3.zip"
    assert zip_name("@example/team-tools", "1.0.0") == "example-team-tools-1.0.0.zip"


def test_pack_then_install_round_trip(tmp_path: Path) -> None:
    folder = plugin_folder(tmp_path / "src", "@example/team-tools")
    result = install_zip(pack(folder).path, tmp_path / "home" / "plugins")
    assert result.path == tmp_path / "home" / "plugins" / "@example" / "team-tools"
    shipped = sorted(p.relative_to(result.path).as_posix() for p in result.path.rglob("*") if p.is_file())
    assert shipped == ["bin/run.sh", "docs/data/table.md", "package.json", "servers/node_modules/dep/index.js",
                       "skills/forecast/SKILL.md", "tools/now.py"]
    assert (result.path / "tools/now.py").read_bytes() == (folder / "tools/now.py").read_bytes()
    assert os.stat(result.path / "bin/run.sh").st_mode & 0o111


def test_a_symbolic_link_in_the_folder_is_refused(tmp_path: Path) -> None:
    folder = plugin_folder(tmp_path)
    (folder / "tools" / "link.py").symlink_to(folder / "tools" / "now.py")
    with pytest.raises(PluginError, match=r"tools/link\.py is a symbolic link"):
        pack(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["weather-kit"]


def test_a_hard_link_to_a_file_outside_the_folder_is_refused_and_its_content_not_packed(tmp_path: Path) -> None:
    folder = plugin_folder(tmp_path)
    secret = tmp_path / "models.json"
    secret.write_text('{"apiKey": "sk-settings"}')
    os.link(secret, folder / "tools" / "models.json")
    with pytest.raises(PluginError, match=r"tools/models\.json is a hard link to a file outside"):
        pack(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models.json", "weather-kit"]


def test_two_names_of_one_file_inside_the_folder_pack(tmp_path: Path) -> None:
    folder = plugin_folder(tmp_path)
    os.link(folder / "tools" / "now.py", folder / "tools" / "again.py")
    assert pack(folder).files == 7


def test_a_link_inside_data_is_not_looked_at(tmp_path: Path) -> None:
    folder = plugin_folder(tmp_path)
    (folder / "data" / "link").symlink_to("/etc")
    assert pack(folder).files == 6


def test_a_folder_without_a_valid_package_json_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    with pytest.raises(PluginError, match=r"package\.json"):
        pack(folder)
    (folder / "package.json").write_text('{"name": "x"}')
    with pytest.raises(PluginError, match="SemVer"):
        pack(folder)


def test_pack_refuses_what_the_installer_would_refuse(tmp_path: Path) -> None:
    folder = plugin_folder(tmp_path)
    with pytest.raises(PluginError, match="limit of 3 entries"):
        pack(folder, limits=Limits(entries=3))
    with pytest.raises(PluginError, match="bytes extracted"):
        pack(folder, limits=Limits(extracted=100))
    with pytest.raises(PluginError, match="over the installer's limit of 200 bytes"):
        pack(folder, limits=Limits(compressed=200))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["weather-kit"]

"""Installing, updating and removing plugins from real ZIP files: both layouts, the folder
from package.json's name, updates that keep data/plugins/<name>/, failed and crashed
updates that leave the installed version as it was, and removal to the trash."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from llmspace.plugins.errors import PluginError
from llmspace.plugins.package import install
from llmspace.plugins.package.install import install_zip, recover_interrupted, remove_plugin

from ..zips import Entry, dir_entry, good_zip, plugin_entries, tree_snapshot, write_zip

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / "home"
    (root / "plugins").mkdir(parents=True)
    return root


def debris(plugins: Path) -> list[str]:
    return sorted(p.name for p in plugins.iterdir() if p.name.startswith("."))


def test_a_zip_with_package_json_at_the_root_installs_into_the_folder_of_its_name(home: Path, tmp_path: Path) -> None:
    plugins = home / "plugins"
    result = install_zip(good_zip(tmp_path / "some-other-name-9.9.9.zip"), plugins)
    assert (result.name, result.version, result.replaced) == ("weather-kit", "1.2.3", False)
    assert result.message == "Installed plugin weather-kit 1.2.3."
    folder = plugins / "weather-kit"
    assert result.path == folder
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == \
        ["bin/run.sh", "package.json", "skills/forecast/SKILL.md", "tools/now.py"]
    assert os.stat(folder / "bin/run.sh").st_mode & 0o111 and not os.stat(folder / "tools/now.py").st_mode & 0o111
    assert debris(plugins) == [".install.lock"]


def test_a_zip_with_one_wrapper_folder_installs_under_the_package_name_not_the_wrapper(home: Path, tmp_path: Path) -> None:
    plugins = home / "plugins"
    result = install_zip(good_zip(tmp_path / "kit.zip", wrapper="wrong-name-1.0"), plugins)
    assert result.path == plugins / "weather-kit"
    assert (plugins / "weather-kit" / "package.json").is_file()
    assert sorted(p.name for p in plugins.iterdir()) == [".install.lock", "weather-kit"]


def test_a_wrapper_zip_without_folder_entries_installs(home: Path, tmp_path: Path) -> None:
    path = write_zip(tmp_path / "kit.zip", plugin_entries(prefix="kit/"))
    assert install_zip(path, home / "plugins").path == home / "plugins" / "weather-kit"


def test_a_scoped_plugin_installs_under_its_scope_folder(home: Path, tmp_path: Path) -> None:
    path = good_zip(tmp_path / "team.zip", name="@example/team-tools", wrapper="team-tools")
    result = install_zip(path, home / "plugins")
    assert result.path == home / "plugins" / "@example" / "team-tools"
    assert (result.path / "package.json").is_file()


def test_macos_metadata_is_left_out(home: Path, tmp_path: Path) -> None:
    entries = [*plugin_entries(prefix="kit/"), dir_entry("__MACOSX"), Entry("__MACOSX/kit/._package.json", b"x"),
               Entry("kit/.DS_Store", b"x"), Entry("kit/tools/._now.py", b"x"), Entry(".DS_Store", b"x")]
    result = install_zip(write_zip(tmp_path / "mac.zip", entries), home / "plugins")
    names = {p.name for p in result.path.rglob("*")}
    assert not names & {".DS_Store", "._now.py", "__MACOSX", "._package.json"}


def test_an_update_replaces_the_files_and_keeps_the_plugin_data(home: Path, tmp_path: Path) -> None:
    plugins = home / "plugins"
    install_zip(good_zip(tmp_path / "v1.zip", version="1.2.3", marker="v1"), plugins)
    (plugins / "weather-kit" / "stale.txt").write_text("only in v1")
    data = home / "data" / "plugins" / "weather-kit"
    data.mkdir(parents=True)
    (data / "cache.db").write_text("keep me")
    result = install_zip(good_zip(tmp_path / "v2.zip", version="1.3.0", marker="v2"), plugins)
    assert result.replaced and result.previous_version == "1.2.3"
    assert result.message == "Updated plugin weather-kit 1.2.3 → 1.3.0."
    assert "v2" in (plugins / "weather-kit" / "tools/now.py").read_text()
    assert not (plugins / "weather-kit" / "stale.txt").exists()
    assert (data / "cache.db").read_text() == "keep me"
    assert debris(plugins) == [".install.lock"]


def test_a_failed_update_leaves_the_installed_version_exactly_as_it_was(home: Path, tmp_path: Path) -> None:
    plugins = home / "plugins"
    install_zip(good_zip(tmp_path / "v1.zip"), plugins)
    before = tree_snapshot(home)
    bad = write_zip(tmp_path / "v2.zip", [*plugin_entries(version="2.0.0", marker="v2"), Entry("tools/../../x", b"x")])
    with pytest.raises(PluginError, match=re.escape("'tools/../../x'")):
        install_zip(bad, plugins)
    assert tree_snapshot(home) == before


def test_an_update_that_fails_after_the_old_folder_moved_aside_puts_it_back(home: Path, tmp_path: Path) -> None:
    plugins = home / "plugins"
    install_zip(good_zip(tmp_path / "v1.zip"), plugins)
    before = tree_snapshot(home)

    def fail(point: str) -> None:
        if point == "aside":
            assert not (plugins / "weather-kit").exists()
            raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        install_zip(good_zip(tmp_path / "v2.zip", version="2.0.0", marker="v2"), plugins, checkpoint=fail)
    assert tree_snapshot(home) == before


CRASH = """
import os, sys
from pathlib import Path
from llmspace.plugins.package.install import install_zip

def checkpoint(point):
    if point == sys.argv[3]:
        os._exit(17)

install_zip(Path(sys.argv[1]), Path(sys.argv[2]), checkpoint=checkpoint)
"""


def crash_install(zip_path: Path, plugins: Path, point: str) -> None:
    """Run an install in a child process that dies (os._exit) at `point`."""
    proc = subprocess.run([sys.executable, "-c", CRASH, str(zip_path), str(plugins), point],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 17, proc.stderr


def test_a_crash_between_moving_aside_and_moving_in_is_undone_at_the_next_scan(home: Path, tmp_path: Path) -> None:
    plugins = home / "plugins"
    install_zip(good_zip(tmp_path / "v1.zip"), plugins)
    before = tree_snapshot(home)
    crash_install(good_zip(tmp_path / "v2.zip", version="2.0.0", marker="v2"), plugins, "aside")
    assert not (plugins / "weather-kit").exists()
    assert [p for p in debris(plugins) if p.startswith(".staging-")]
    assert recover_interrupted(plugins) == ["Restored plugin weather-kit after an interrupted install."]
    assert tree_snapshot(home) == before
    assert recover_interrupted(plugins) == []


def test_the_next_install_recovers_a_crashed_one_first(home: Path, tmp_path: Path) -> None:
    plugins = home / "plugins"
    install_zip(good_zip(tmp_path / "v1.zip", name="@example/team-tools"), plugins)
    crash_install(good_zip(tmp_path / "v2.zip", name="@example/team-tools", version="2.0.0"), plugins, "aside")
    assert not (plugins / "@example" / "team-tools").exists()
    install_zip(good_zip(tmp_path / "other.zip", name="other-kit"), plugins)
    assert (plugins / "@example" / "team-tools" / "package.json").is_file()
    assert b"1.2.3" in (plugins / "@example" / "team-tools" / "package.json").read_bytes()
    assert debris(plugins) == [".install.lock"]


@pytest.mark.parametrize("point", ["extracted", "moved-in"])
def test_a_crash_before_or_after_the_swap_leaves_one_whole_version(home: Path, tmp_path: Path, point: str) -> None:
    plugins = home / "plugins"
    install_zip(good_zip(tmp_path / "v1.zip", marker="v1"), plugins)
    crash_install(good_zip(tmp_path / "v2.zip", version="2.0.0", marker="v2"), plugins, point)
    assert recover_interrupted(plugins) == []
    expected = "v1" if point == "extracted" else "v2"
    assert expected in (plugins / "weather-kit" / "tools/now.py").read_text()
    assert debris(plugins) == [".install.lock"]


def test_a_crashed_first_install_leaves_nothing_installed(home: Path, tmp_path: Path) -> None:
    plugins = home / "plugins"
    crash_install(good_zip(tmp_path / "v1.zip"), plugins, "extracted")
    recover_interrupted(plugins)
    assert sorted(p.name for p in plugins.iterdir()) == [".install.lock"]


def test_recovery_leaves_a_running_install_alone(home: Path, tmp_path: Path) -> None:
    plugins = home / "plugins"
    staging = plugins / ".staging-running"
    (staging / "new").mkdir(parents=True)
    with install._locked(plugins):
        assert recover_interrupted(plugins) == []
        assert staging.is_dir()
    recover_interrupted(plugins)
    assert not staging.exists()


def test_recovery_of_a_missing_plugins_folder_does_nothing(tmp_path: Path) -> None:
    assert recover_interrupted(tmp_path / "nowhere") == []
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_install_refuses_to_replace_a_file_or_link_of_the_plugin_name(home: Path, tmp_path: Path, kind: str) -> None:
    plugins = home / "plugins"
    elsewhere = tmp_path / "dev-folder"
    elsewhere.mkdir()
    if kind == "file":
        (plugins / "weather-kit").write_text("not a folder")
    else:
        (plugins / "weather-kit").symlink_to(elsewhere)
    path = good_zip(tmp_path / "v1.zip")
    before = tree_snapshot(tmp_path)
    with pytest.raises(PluginError, match="not a folder"):
        install_zip(path, plugins)
    after = tree_snapshot(tmp_path)
    assert after.pop("home/plugins/.install.lock") == b""
    assert after == before


def test_remove_moves_the_package_to_the_trash_and_keeps_data_and_settings(home: Path, tmp_path: Path) -> None:
    plugins = home / "plugins"
    install_zip(good_zip(tmp_path / "team.zip", name="@example/team-tools"), plugins)
    data = home / "data" / "plugins" / "@example" / "team-tools"
    data.mkdir(parents=True)
    settings = home / "settings" / "plugins.json"
    settings.parent.mkdir()
    settings.write_text('{"schemaVersion": 1, "plugins": {"@example/team-tools": {"enabled": false}}}')
    where = remove_plugin(plugins, "@example/team-tools", trash_dir=home / ".trash", use_os_trash=False)
    assert Path(where).parent == home / ".trash" / "plugins"
    assert (Path(where) / "package.json").is_file()
    assert not (plugins / "@example").exists()
    assert data.is_dir() and "enabled" in settings.read_text()


def test_removing_a_plugin_that_is_not_installed_says_so(home: Path) -> None:
    with pytest.raises(PluginError, match="No plugin named ghost is installed"):
        remove_plugin(home / "plugins", "ghost", trash_dir=home / ".trash", use_os_trash=False)
    with pytest.raises(PluginError, match="not a valid plugin name"):
        remove_plugin(home / "plugins", "../etc", trash_dir=home / ".trash", use_os_trash=False)

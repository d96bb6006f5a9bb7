"""A corpus of bad plugin ZIPs: each is refused with a message naming the problem and the
entry, nothing is written outside the staging folder, and no staging folder is left."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from llmspace.plugins.errors import PluginError
from llmspace.plugins.package import archive
from llmspace.plugins.package.archive import ArchiveError, Limits
from llmspace.plugins.package.install import install_zip

from ..zips import (
    Entry,
    MiB,
    bomb_zip,
    dir_entry,
    good_zip,
    manifest,
    many_entries_zip,
    oversize_zip,
    plugin_entries,
    tree_snapshot,
    write_zip,
)


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    folder = tmp_path / "home" / "plugins"
    folder.mkdir(parents=True)
    return folder


def refused(zip_path: Path, plugins: Path, *, limits: Limits = archive.DEFAULT_LIMITS) -> PluginError:
    """Install `zip_path`, expect a refusal, and check that nothing outside `plugins` was
    written and that `plugins` holds only the lock file afterwards."""
    inside = plugins.relative_to(zip_path.parent).as_posix() + "/"
    outside = tree_snapshot(zip_path.parent)
    with pytest.raises(PluginError) as info:
        install_zip(zip_path, plugins, limits=limits)
    after = tree_snapshot(zip_path.parent)
    assert sorted(p.name for p in plugins.iterdir()) == [".install.lock"]
    assert {k: v for k, v in after.items() if not k.startswith(inside)} == \
        {k: v for k, v in outside.items() if not k.startswith(inside)}
    return info.value


BAD_ENTRIES = [
    pytest.param(Entry("../x", b"evil"), "../x", "climbs out of the package with '..'", id="zip-slip"),
    pytest.param(Entry("tools/../../x", b"evil"), "tools/../../x", "'..'", id="zip-slip-inner"),
    pytest.param(Entry("/etc/evil", b"evil"), "/etc/evil", "absolute path", id="absolute"),
    pytest.param(Entry("tools\\..\\..\\x", b"evil"), "tools\\..\\..\\x", "backslash", id="backslash"),
    pytest.param(Entry("C:/x", b"evil"), "C:/x", "drive letter", id="drive-letter"),
    pytest.param(Entry("C:x", b"evil"), "C:x", "drive letter", id="drive-relative"),
    pytest.param(Entry("tools/a:b", b"x"), "tools/a:b", "':'", id="colon"),
    pytest.param(Entry("tools/link", b"/etc/passwd", stat.S_IFLNK | 0o777), "tools/link", "symbolic link", id="symlink"),
    pytest.param(Entry("tools/fifo", b"", stat.S_IFIFO | 0o644), "tools/fifo", "special file", id="fifo"),
    pytest.param(Entry("tools/dev", b"", stat.S_IFCHR | 0o644), "tools/dev", "special file", id="device"),
    pytest.param(Entry("tools/./x.py", b"x"), "tools/./x.py", "'.' path component", id="dot-component"),
    pytest.param(Entry("tools//x.py", b"x"), "tools//x.py", "empty or '.'", id="empty-component"),
    pytest.param(Entry("tools/x\x01.py", b"x"), "tools/x\x01.py", "control character", id="control-char"),
    pytest.param(Entry("tools/now.py", b"again"), "tools/now.py", "appears twice", id="duplicate"),
]


@pytest.mark.parametrize(("entry", "name", "problem"), BAD_ENTRIES)
def test_a_zip_with_an_unsafe_entry_is_refused_naming_the_entry(plugins: Path, tmp_path: Path, entry: Entry,
                                                               name: str, problem: str) -> None:
    path = write_zip(tmp_path / "bad.zip", [*plugin_entries(), entry])
    err = refused(path, plugins)
    assert isinstance(err, ArchiveError)
    assert problem in err.message and repr(name) in err.message and "bad.zip" in err.message
    assert err.entry == name


def test_an_unsafe_entry_in_the_ignored_macos_metadata_is_still_refused(plugins: Path, tmp_path: Path) -> None:
    path = write_zip(tmp_path / "bad.zip", [*plugin_entries(), Entry("__MACOSX/../../x", b"evil")])
    assert "'..'" in refused(path, plugins).message


def test_a_zip_bomb_is_stopped_at_200_MiB_counted_while_extracting(plugins: Path, tmp_path: Path) -> None:
    path = bomb_zip(tmp_path / "bomb.zip", extracted=201 * MiB)
    assert path.stat().st_size < 2 * MiB
    err = refused(path, plugins)
    assert "200 MiB limit" in err.message and "'blob.bin'" in err.message


def test_the_extracted_limit_counts_bytes_across_entries(plugins: Path, tmp_path: Path) -> None:
    entries = [Entry("package.json", manifest()), *(Entry(f"f{i}.bin", bytes(400)) for i in range(5))]
    path = write_zip(tmp_path / "many.zip", entries)
    err = refused(path, plugins, limits=Limits(extracted=1500))
    assert "'f3.bin'" in err.message and "1500 bytes limit" in err.message


def test_a_zip_with_more_than_10000_entries_is_refused(plugins: Path, tmp_path: Path) -> None:
    path = many_entries_zip(tmp_path / "many.zip", 10_001)
    err = refused(path, plugins)
    assert "10001 entries, over the limit of 10000" in err.message and "files/f09999.txt" in err.message


def test_the_entry_limit_counts_every_entry_and_allows_exactly_the_limit(plugins: Path, tmp_path: Path) -> None:
    path = many_entries_zip(tmp_path / "many.zip", 6)
    assert install_zip(path, plugins, limits=Limits(entries=6)).name == "weather-kit"
    other = tmp_path / "other" / "plugins"
    other.mkdir(parents=True)
    err = refused(many_entries_zip(tmp_path / "more.zip", 7), other, limits=Limits(entries=6))
    assert "7 entries, over the limit of 6" in err.message


def test_a_zip_over_50_MiB_is_refused_before_it_is_read(plugins: Path, tmp_path: Path) -> None:
    path = oversize_zip(tmp_path / "huge.zip", 50 * MiB)
    err = refused(path, plugins)
    assert "huge.zip" in err.message and "over the 50 MiB limit" in err.message


def test_the_default_limits_are_those_of_the_plugin_guide() -> None:
    assert archive.MAX_COMPRESSED_BYTES == 50 * 1024 * 1024
    assert archive.MAX_EXTRACTED_BYTES == 200 * 1024 * 1024
    assert archive.MAX_ENTRIES == 10_000
    assert Limits() == Limits(50 * 1024 * 1024, 200 * 1024 * 1024, 10_000) == archive.DEFAULT_LIMITS


def test_two_package_roots_are_refused(plugins: Path, tmp_path: Path) -> None:
    path = write_zip(tmp_path / "two.zip", [*plugin_entries(prefix="a/"), *plugin_entries("other", prefix="b/")])
    err = refused(path, plugins)
    assert "several package roots (a/package.json, b/package.json)" in err.message and "'b/package.json'" in err.message


def test_a_file_beside_the_wrapper_folder_is_refused(plugins: Path, tmp_path: Path) -> None:
    path = write_zip(tmp_path / "stray.zip", [*plugin_entries(prefix="kit/"), Entry("README.md", b"hi")])
    err = refused(path, plugins)
    assert "'README.md'" in err.message and "outside the package folder 'kit/'" in err.message


def test_a_package_json_two_levels_down_is_not_a_package_root(plugins: Path, tmp_path: Path) -> None:
    path = write_zip(tmp_path / "deep.zip", plugin_entries(prefix="a/b/"))
    assert "no package.json at the root of the ZIP or inside one top-level folder" in refused(path, plugins).message


def test_a_zip_without_package_json_is_refused(plugins: Path, tmp_path: Path) -> None:
    path = write_zip(tmp_path / "none.zip", plugin_entries()[1:])
    err = refused(path, plugins)
    assert "none.zip" in err.message and "no package.json" in err.message


def test_only_macos_metadata_does_not_count_as_a_package(plugins: Path, tmp_path: Path) -> None:
    path = write_zip(tmp_path / "mac.zip", [Entry("__MACOSX/package.json", manifest()), Entry("._package.json", manifest())])
    assert "no package.json" in refused(path, plugins).message


@pytest.mark.parametrize(("data", "problem"), [
    pytest.param(b"{not json", "malformed JSON at line 1", id="malformed"),
    pytest.param(b"[]", "must hold a JSON object", id="not-object"),
    pytest.param(manifest(name="Bad Name"), "invalid \"name\"", id="bad-name"),
    pytest.param(manifest(version="1.2"), "SemVer", id="bad-version"),
    pytest.param(b'{"name": "a", "version": "1.0.0"}', "engines", id="no-engines"),
])
def test_an_invalid_package_json_is_refused_naming_the_file(plugins: Path, tmp_path: Path, data: bytes, problem: str) -> None:
    path = write_zip(tmp_path / "bad.zip", [dir_entry("kit"), Entry("kit/package.json", data), Entry("kit/x.txt", b"x")])
    err = refused(path, plugins)
    assert "bad.zip: kit/package.json" in err.message and problem in err.message


def test_an_oversized_package_json_is_refused(plugins: Path, tmp_path: Path) -> None:
    path = write_zip(tmp_path / "big.zip", [Entry("package.json", b" " * (archive.MANIFEST_MAX_BYTES + 1))])
    assert "'package.json'" in refused(path, plugins).message


def test_a_file_that_is_not_a_zip_is_refused(plugins: Path, tmp_path: Path) -> None:
    path = tmp_path / "fake.zip"
    path.write_bytes(b"PK\x03\x04 not really")
    assert "fake.zip: is not a valid ZIP file" in refused(path, plugins).message


def test_a_corrupt_entry_is_refused_and_the_staging_folder_removed(plugins: Path, tmp_path: Path) -> None:
    path = good_zip(tmp_path / "corrupt.zip")
    data = bytearray(path.read_bytes())
    offset = data.index(b"tools/now.py") + len("tools/now.py") + 2  # inside its deflated data (no extra field)
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))
    err = refused(path, plugins)
    assert "'tools/now.py'" in err.message


def test_a_file_and_a_folder_of_the_same_path_are_refused(plugins: Path, tmp_path: Path) -> None:
    path = write_zip(tmp_path / "clash.zip", [*plugin_entries(), Entry("tools/now.py/inner.py", b"x")])
    assert "'tools/now.py/inner.py'" in refused(path, plugins).message


def test_a_hard_link_to_a_file_outside_the_package_is_refused_before_it_is_moved_into_place(
        plugins: Path, tmp_path: Path) -> None:
    """A hard link passes Landlock (its rules follow paths, not files): one planted in the
    package while it is extracted, to the data root's settings, would let the confined plugin
    read them. The extracted folder is checked before it replaces anything."""
    import os

    secret = tmp_path / "home" / "settings" / "models.json"
    secret.parent.mkdir()
    secret.write_text('{"key": "sk-settings"}')

    def plant(point: str) -> None:
        if point == "extracted":
            (new,) = plugins.glob(".staging-*/new")
            os.link(secret, new / "tools" / "models.json")

    with pytest.raises(PluginError) as info:
        install_zip(good_zip(tmp_path / "good.zip"), plugins, checkpoint=plant)
    assert "hard link" in info.value.message and "tools/models.json" in info.value.message
    assert sorted(p.name for p in plugins.iterdir()) == [".install.lock"]
    assert secret.stat().st_nlink == 1

"""package.json parsing, package names, engines ranges and plugin folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.plugins.contract import APP_COMPAT_VERSION
from llmspace.plugins.errors import PluginError
from llmspace.plugins.package.manifest import (
    engines_compatible,
    is_valid_package_name,
    parse_manifest,
    plugin_folder,
)
from llmspace.plugins.package.semrange import parse_range


def _pkg(**fields: object) -> bytes:
    data: dict[str, object] = {"name": "weather-kit", "version": "1.2.3", "engines": {"llm-space": ">=4.7.1"}}
    data.update(fields)
    return json.dumps(data).encode()


def test_a_complete_package_json_keeps_display_fields_and_the_raw_object() -> None:
    m = parse_manifest(_pkg(displayName="Weather", description="d", author={"name": "Ann", "email": "a@x"},
                            license="MIT", homepage="https://x", repository={"type": "git", "url": "https://g"},
                            keywords=["a", 1, "b"], scripts={"postinstall": "rm -rf /"}), where="p/package.json")
    assert (m.name, m.version, m.engines_range) == ("weather-kit", "1.2.3", ">=4.7.1")
    assert (m.title, m.author, m.repository, m.keywords) == ("Weather", "Ann", "https://g", ("a", "b"))
    assert m.raw["scripts"] == {"postinstall": "rm -rf /"}


@pytest.mark.parametrize(("fields", "needle"), [
    ({"name": "Weather"}, "lowercase"),
    ({"name": 3}, "non-empty string"),
    ({"name": "../evil"}, "may not start"),
    ({"name": "@scope/../x"}, "use lowercase"),
    ({"version": "1.2"}, "SemVer"),
    ({"version": "v1.2.3"}, "SemVer"),
    ({"engines": {}}, "engines"),
    ({"engines": {"llm-space": ">=banana"}}, "not a SemVer range"),
])
def test_invalid_package_json_names_the_problem(fields: dict[str, object], needle: str) -> None:
    with pytest.raises(PluginError) as err:
        parse_manifest(_pkg(**fields), where="plugins/x/package.json")
    assert needle in str(err.value) and "plugins/x/package.json" in str(err.value)


def test_malformed_json_is_a_plugin_error_with_a_position() -> None:
    with pytest.raises(PluginError, match="line 1"):
        parse_manifest(b"{nope", where="package.json")
    with pytest.raises(PluginError, match="JSON object"):
        parse_manifest(b"[1]", where="package.json")


@pytest.mark.parametrize(("name", "ok"), [
    ("weather-kit", True), ("@example/team-tools", True), ("a.b_c-1", True), ("x" * 214, True),
    ("x" * 215, False), ("Upper", False), (".hidden", False), ("_under", False), ("node_modules", False),
    ("with space", False), ("a/b", False), ("@scope/", False), ("@/x", False), ("@s/.x", False), ("", False),
    ("caf\u00e9", False), ("tilde~", False), ("@s/a/b", False),
])
def test_package_name_rules(name: str, ok: bool) -> None:
    assert is_valid_package_name(name) is ok


@pytest.mark.parametrize(("rng", "ok"), [
    (">=4.7.1", True), (">=4.9.0", True), ("^4.9.0", True), ("4.x", True), ("4", True), ("*", True), ("", True),
    (">=4.7 <5", True), ("~4.9", True), ("~4.8", False), ("^4.9.1", False), (">=5", False), ("5.x", False),
    ("<4.9", False), ("<=4.9", True), (">4.8", True), (">4", False), ("3.x || 4.x", True), ("1 || >=5", False),
    ("4.0.0 - 4.9.0", True), ("4.0 - 4.8", False), ("4.0 - 5", True), (">= 4.7.1", True), ("=4.9.0", True),
    ("^4.9.0-beta.1", True), ("4.9.0", True), ("4.9.1", False),
])
def test_engines_range_table(rng: str, ok: bool) -> None:
    assert APP_COMPAT_VERSION == "4.9.0"
    assert engines_compatible(rng) is ok


@pytest.mark.parametrize(("rng", "version", "ok"), [
    ("^0.2.3", "0.2.9", True), ("^0.2.3", "0.3.0", False), ("^0.0.3", "0.0.3", True), ("^0.0.3", "0.0.4", False),
    ("^0.x", "0.9.0", True), ("^0.0", "0.1.0", False), ("~1.2.3", "1.2.9", True), ("~1.2.3", "1.3.0", False),
    ("^4.9.0", "5.0.0-beta", False), (">=4.7.1", "4.9.1-rc.1", False), (">=4.9.1-rc.0", "4.9.1-rc.1", True),
    ("1.2.3 - 2", "2.9.9", True), ("1.2.3 - 2", "3.0.0", False),
])
def test_npm_prerelease_and_caret_rules(rng: str, version: str, ok: bool) -> None:
    assert parse_range(rng).satisfies(version) is ok


@pytest.mark.parametrize("bad", [">=banana", "^^1", "1.2.3.4", "1.2.x.4", ">=1.2.3-", "<>1"])
def test_bad_ranges_are_incompatible(bad: str) -> None:
    assert engines_compatible(bad) is False


def test_plugin_folder_maps_regular_and_scoped_names(tmp_path: Path) -> None:
    assert plugin_folder(tmp_path, "weather-kit") == tmp_path / "weather-kit"
    assert plugin_folder(tmp_path, "@example/team-tools") == tmp_path / "@example" / "team-tools"
    with pytest.raises(PluginError, match="not a valid plugin name"):
        plugin_folder(tmp_path, "../x")

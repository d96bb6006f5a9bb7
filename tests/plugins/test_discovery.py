"""Discovery of real plugin folders: layouts, metadata, paths, extensions and icons."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from llmspace.paths import DataRoot
from llmspace.plugins.service import PluginService

from .builders import SKILL, make_plugin, png_bytes


def _service(home: Path) -> PluginService:
    return PluginService(DataRoot(home), environ={})


def test_a_regular_and_a_scoped_package_are_found_with_every_extension_kind(home: Path) -> None:
    make_plugin(home, "weather-kit", displayName="Weather", files={"tools/forecast.py": "x", "tools/_util.py": "",
                                                                  "tools/types.d.ts": "", "tools/notes.md": ""})
    make_plugin(home, "@example/team-tools", files={
        "icon.png": png_bytes(512, 512),
        "skills/review/SKILL.md": SKILL, "skills/review/references/list.md": "x",
        "mcp.json": {"servers": [{"id": "kb", "name": "Knowledge", "transport": "streamableHttp", "url": "x"}]},
        "models.json": {"providers": [{"id": "cloud", "name": "Cloud", "api": "openai-completions"}]},
        "commands/open.ts": "", "thread-storages/library.mjs": "", "tools/info.js": "",
        "config.schema.json": {"type": "object", "properties": {"a": {"type": "string"}}},
    })
    (home / "plugins" / "node_modules" / "x").mkdir(parents=True)
    (home / "plugins" / "README.txt").write_text("not a plugin")
    records = {r.key: r for r in _service(home).records()}
    assert sorted(records) == ["@example/team-tools", "weather-kit"]
    weather, team = records["weather-kit"], records["@example/team-tools"]
    assert (weather.status, weather.manifest and weather.manifest.title) == ("active", "Weather")
    assert [e.canonical_id for e in weather.extensions] == ["plugin:weather-kit:tool:forecast"]
    assert team.status == "active" and team.icon == team.folder / "icon.png"
    assert {e.canonical_id: e.status for e in team.extensions} == {
        "plugin:@example/team-tools:skill:review": "active",
        "plugin:@example/team-tools:mcp:kb": "active",
        "plugin:@example/team-tools:model-provider:cloud": "active",
        "plugin:@example/team-tools:tool:info": "active",
        "plugin:@example/team-tools:command:open": "active",
        "plugin:@example/team-tools:thread-storage:library": "active",
        "plugin:@example/team-tools:settings:config": "active",
    }
    assert next(e for e in team.extensions if e.kind == "skill").description == "Review a release"
    assert team.counts()["skill"] == 1 and team.diagnostics == ()


def test_a_folder_that_differs_from_the_package_name_is_an_error_with_a_log(home: Path) -> None:
    make_plugin(home, "other-name", folder="weather-kit")
    record = _service(home).get("weather-kit")
    assert record.status == "error"
    diag = record.diagnostics[0]
    assert "must match package.json name 'other-name'" in diag.summary
    assert diag.log_path is not None and diag.log_path.parent == home / "logs" / "plugins" / "weather-kit"
    assert diag.log_path.name.endswith(f"-discovery-{diag.error_id}.log")


def test_a_folder_without_a_valid_name_logs_under_invalid(home: Path) -> None:
    make_plugin(home, "Bad_Name", folder="Bad_Name")
    record = _service(home).get("Bad_Name")
    assert record.status == "error" and "lowercase" in record.diagnostics[0].summary
    log = record.diagnostics[0].log_path
    assert log is not None and log.parent == home / "logs" / "plugins" / "_invalid"
    assert "folder: plugins/Bad_Name" in log.read_text()


def test_bad_semver_and_missing_engines_are_errors(home: Path) -> None:
    make_plugin(home, "bad-version", version="1.0")
    root = make_plugin(home, "no-engines")
    (root / "package.json").write_text('{"name": "no-engines", "version": "1.0.0"}')
    records = {r.key: r for r in _service(home).records()}
    assert records["bad-version"].status == "error" and "SemVer" in records["bad-version"].diagnostics[0].summary
    assert records["no-engines"].status == "error" and "engines" in records["no-engines"].diagnostics[0].summary


def test_engines_decide_compatibility(home: Path) -> None:
    make_plugin(home, "old-ok", engines=">=4.7.1", files={"tools/a.py": ""})
    make_plugin(home, "exact-ok", engines=">=4.9.0")
    make_plugin(home, "too-new", engines=">=5", files={"tools/a.py": ""})
    records = {r.key: r for r in _service(home).records()}
    assert records["old-ok"].status == "active" and records["exact-ok"].status == "active"
    new = records["too-new"]
    assert (new.status, new.compatible, new.extensions[0].status) == ("incompatible", False, "inactive")
    assert "4.9.0" in new.diagnostics[0].summary


def test_symlinked_files_and_folders_are_rejected(home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "tools").mkdir(parents=True)
    (outside / "secret.py").write_text("x")
    root = make_plugin(home, "linky", files={"tools/good.py": "", "commands/ok.ts": ""})
    os.symlink(outside / "secret.py", root / "tools" / "evil.py")
    os.symlink(outside / "tools", root / "thread-storages")
    os.symlink(outside, home / "plugins" / "linked-root")
    records = {r.key: r for r in _service(home).records()}
    linky = records["linky"]
    status = {e.canonical_id: (e.status, e.reason) for e in linky.extensions}
    assert linky.status == "degraded"
    assert status["plugin:linky:tool:good"] == ("active", "")
    assert status["plugin:linky:tool:evil"][0] == "failed" and "symbolic link" in status["plugin:linky:tool:evil"][1]
    assert status["plugin:linky:thread-storage:thread-storages"][0] == "failed"
    assert all(e.error_id and e.log_path and e.log_path.exists() for e in linky.failed())
    assert records["linked-root"].status == "error" and "symbolic link" in records["linked-root"].diagnostics[0].summary


def test_a_plugin_folder_holding_a_hard_link_to_a_file_outside_it_is_an_error_naming_the_file(home: Path) -> None:
    """Landlock's rules follow paths: a hard link in a plugin's folder to `settings/models.json`
    made it readable to a plugin confined to its folder. Such a folder is refused at load; a
    file whose every name is inside the folder is fine."""
    secret = home / "settings" / "models.json"
    secret.parent.mkdir()
    secret.write_text('{"key": "sk-settings"}')
    linked = make_plugin(home, "linked", files={"tools/a.py": ""})
    os.link(secret, linked / "tools" / "models.json")
    twins = make_plugin(home, "twins", files={"tools/a.py": "x"})
    os.link(twins / "tools" / "a.py", twins / "tools" / "b.py")
    records = {r.key: r for r in _service(home).records()}
    assert records["linked"].status == "error"
    summary = records["linked"].diagnostics[0].summary
    assert "hard link" in summary and "tools/models.json" in summary, summary
    assert records["twins"].status == "active"


def test_extensions_at_a_wrong_depth_are_ignored_with_a_warning(home: Path) -> None:
    make_plugin(home, "deep", files={"commands/admin/open.ts": "", "commands/top.ts": "",
                                     "skills/nested/inner/SKILL.md": SKILL, "tools/sub/x.py": ""})
    record = _service(home).get("deep")
    assert [e.canonical_id for e in record.extensions] == ["plugin:deep:command:top"]
    warnings = [d.summary for d in record.diagnostics if d.level == "warning"]
    assert any("commands/admin/ was ignored" in w for w in warnings)
    assert any("skills/nested/ was ignored" in w for w in warnings)
    assert record.status == "active"


def test_an_invalid_icon_falls_back_to_the_default_with_a_warning(home: Path) -> None:
    make_plugin(home, "not-png", files={"icon.png": b"GIF89a" + b"\0" * 40, "tools/a.py": ""})
    make_plugin(home, "huge-icon", files={"icon.png": png_bytes(5000, 10)})
    big = make_plugin(home, "heavy-icon", files={"icon.png": png_bytes(8, 8)})
    with open(big / "icon.png", "ab") as fh:
        fh.write(b"\0" * (2 * 1024 * 1024))
    broken = bytearray(png_bytes())
    broken[20] ^= 1  # IHDR checksum no longer matches
    make_plugin(home, "bad-crc", files={"icon.png": bytes(broken)})
    records = {r.key: r for r in _service(home).records()}
    for key, needle in (("not-png", "signature"), ("huge-icon", "4096"), ("heavy-icon", "2 MiB"), ("bad-crc", "checksum")):
        r = records[key]
        assert r.status == "active" and r.icon is None, key
        assert any(needle in d.summary and d.level == "warning" for d in r.diagnostics), (key, r.diagnostics)


def test_duplicate_ids_and_bad_mcp_entries_fail_those_extensions(home: Path) -> None:
    make_plugin(home, "dupes", files={
        "tools/a.py": "", "tools/a.ts": "", "tools/b.py": "",
        "mcp.json": {"servers": [{"id": "s", "name": "S", "transport": "carrier-pigeon"}, {"id": "t", "name": "T", "transport": "stdio"}]},
        "models.json": "{not json",
    })
    record = _service(home).get("dupes")
    status = {(e.canonical_id, e.path.name): e.status for e in record.extensions}
    assert status[("plugin:dupes:tool:a", "a.py")] == status[("plugin:dupes:tool:a", "a.ts")] == "failed"
    assert status[("plugin:dupes:tool:b", "b.py")] == "active"
    assert status[("plugin:dupes:mcp:s", "mcp.json")] == "failed"
    assert status[("plugin:dupes:mcp:t", "mcp.json")] == "active"
    assert status[("plugin:dupes:model-provider:models.json", "models.json")] == "failed"
    assert record.status == "degraded"


def test_refresh_sees_added_and_removed_plugins_and_reload_sees_edits(home: Path) -> None:
    service = _service(home)
    assert service.records() == []
    root = make_plugin(home, "later")
    assert service.records() == []
    assert [r.key for r in service.refresh()] == ["later"]
    (root / "tools").mkdir()
    (root / "tools" / "new.py").write_text("")
    assert [e.id for e in service.reload("later").extensions] == ["new"]
    shutil.rmtree(root)
    assert service.refresh() == []

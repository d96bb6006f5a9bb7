"""Capabilities declared in package.json and approved at install (issue 28): the manifest
check, `plugins install` with --yes or without a terminal, an update asking for more,
`plugins approve`, and `plugins info` showing declared, granted and enforced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from llmspace.cli import main
from llmspace.plugins.errors import PluginError
from llmspace.plugins.package.capabilities import infer
from llmspace.plugins.package.manifest import parse_manifest

from ..zips import manifest, plugin_tree

LEGACY_TOOL = "import os, urllib.request\nKEY = os.environ.get('WEATHER_KEY')\n"


def _zip(tmp_path: Path, name: str, version: str, files: dict[str, str], **extra: object) -> Path:
    folder = plugin_tree(tmp_path / f"src-{version}" / name, {"package.json": manifest(name, version, **extra), **files})
    out = tmp_path / f"{name}-{version}.zip"
    assert main(["plugins", "pack", str(folder), "-o", str(out)]) == 0
    return out


def _grants(home: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((home / "settings" / "plugins.json").read_text(encoding="utf-8"))
    return dict(data["plugins"])


def test_the_manifest_keeps_declared_capabilities_and_refuses_unknown_ones() -> None:
    def parse(**extra: object) -> object:
        raw = {"name": "kit", "version": "1.0.0", "engines": {"llm-space": ">=4.0.0"}, **extra}
        return parse_manifest(json.dumps(raw).encode(), where="package.json").capabilities

    assert parse() is None
    assert parse(llmSpace={"capabilities": []}) == ()
    assert parse(llmSpace={"capabilities": ["environment", "network"]}) == ("network", "environment")
    with pytest.raises(PluginError, match="unknown capabilities 'disk'"):
        parse(llmSpace={"capabilities": ["disk"]})
    with pytest.raises(PluginError, match="must be a list of names"):
        parse(llmSpace={"capabilities": "network"})


def test_capabilities_are_inferred_from_python_and_typescript_code(tmp_path: Path) -> None:
    plugin_tree(tmp_path / "p", {"tools/a.py": LEGACY_TOOL, "commands/b.ts": "import { execFile } from 'node:child_process';\n",
                                 "tools/c.ts": "const r = await fetch(url); const k = process.env.KEY;\n",
                                 "tools/d.py": "open(os.path.expanduser('~/x'), 'w').write('y')\n"})
    assert infer(tmp_path / "p") == ("network", "processes", "read-outside-workspace", "write-outside-workspace",
                                     "environment")


def test_a_legacy_plugin_without_a_terminal_or_yes_is_installed_disabled_until_approved(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _zip(tmp_path, "weather-kit", "1.0.0", {"tools/now.py": LEGACY_TOOL})
    capsys.readouterr()
    assert main(["plugins", "install", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "weather-kit does not declare the capabilities it needs; its code appears to use network, environment" \
        in printed
    assert "Status: disabled" in printed and "llmspace plugins approve weather-kit" in printed
    assert _grants(home)["weather-kit"] == {"enabled": False, "settings": {}, "pendingCapabilities": ["network", "environment"]}

    assert main(["plugins", "approve", "weather-kit"]) == 0
    assert "Granted weather-kit: network, environment." in capsys.readouterr().out
    assert _grants(home)["weather-kit"] == {"enabled": True, "settings": {}, "capabilities": ["network", "environment"]}


def test_enabling_a_plugin_that_was_not_approved_grants_what_it_asked_for(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _zip(tmp_path, "weather-kit", "1.0.0", {"tools/now.py": "X = 1\n"}, llmSpace={"capabilities": ["network"]})
    assert main(["plugins", "install", str(out)]) == 0
    assert _grants(home)["weather-kit"]["enabled"] is False
    assert main(["plugins", "enable", "weather-kit"]) == 0
    assert _grants(home)["weather-kit"] == {"enabled": True, "settings": {}, "capabilities": ["network"]}


def test_yes_grants_what_is_shown_and_an_update_asking_for_more_waits_for_approval(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    v1 = _zip(tmp_path, "weather-kit", "1.0.0", {"tools/now.py": "X = 1\n"}, llmSpace={"capabilities": ["network"]})
    assert main(["plugins", "install", "--yes", str(v1)]) == 0
    assert "Granted (--yes)." in capsys.readouterr().out
    assert _grants(home)["weather-kit"]["capabilities"] == ["network"]

    same = _zip(tmp_path, "weather-kit", "1.1.0", {"tools/now.py": "X = 1\n"}, llmSpace={"capabilities": ["network"]})
    assert main(["plugins", "install", str(same)]) == 0
    printed = capsys.readouterr().out
    assert "asks for" not in printed and "not approved" not in printed  # no more than granted: no question

    more = _zip(tmp_path, "weather-kit", "1.2.0", {"tools/now.py": "X = 1\n"},
                llmSpace={"capabilities": ["network", "processes"]})
    assert main(["plugins", "install", str(more)]) == 0
    assert "installed disabled (not approved)" in capsys.readouterr().out
    assert main(["plugins", "info", "weather-kit"]) == 0
    info = capsys.readouterr().out
    assert "not approved: it asks for network, processes" in info
    assert "declared:    network, processes" in info
    assert "granted:     nothing yet; asks for network, processes (llmspace plugins approve weather-kit)" in info


def test_info_shows_declared_granted_and_enforced(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLM_SPACE_SANDBOX", raising=False)
    out = _zip(tmp_path, "weather-kit", "1.0.0", {"tools/now.py": "X = 1\n"}, llmSpace={"capabilities": ["network"]})
    assert main(["plugins", "install", "--yes", str(out)]) == 0
    capsys.readouterr()
    assert main(["plugins", "info", "weather-kit"]) == 0
    info = capsys.readouterr().out
    assert "declared:    network" in info and "granted:     network" in info
    assert "network:" in info and "processes:" in info and "environment:" in info
    assert "enforced (the host's environment is cut down)" in info


def test_check_warns_where_the_declaration_differs_from_what_the_code_uses(tmp_path: Path) -> None:
    from llmspace.plugins.package.check import check_plugin, format_report

    def item(folder: Path) -> str:
        line = next(x for x in format_report(check_plugin(folder)).splitlines() if " capabilities " in x)
        return line

    declared_none = plugin_tree(tmp_path / "kit", {"package.json": manifest("kit", "1.0.0", llmSpace={"capabilities": ["network"]}),
                                                   "tools/a.py": "import subprocess\n"})
    assert item(declared_none) == ("WARN  capabilities  the code appears to use processes, not declared (tools/a.py: "
                                   "processes): it will be refused; declared but not seen in the code: network "
                                   "(users are asked for it)")
    legacy = plugin_tree(tmp_path / "old", {"package.json": manifest("old", "1.0.0"), "tools/b.ts": "await fetch(u);\n"})
    assert item(legacy).startswith("WARN  capabilities  not declared (a legacy plugin; users are asked at install); "
                                   "the code appears to use network (tools/b.ts: network)")
    bad = plugin_tree(tmp_path / "bad", {"package.json": manifest("bad", "1.0.0", llmSpace={"capabilities": ["disk"]})})
    assert item(bad).startswith("FAIL  capabilities")

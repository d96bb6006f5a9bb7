"""Acceptance of JavaScript/TypeScript plugin code: a plugin made of the guide's examples
(the §6 skill, the §16 `config.schema.json` with `audience` and `hello.ts`, the §9 tool, the
§10 commands, the §11 storage; plus a test command, `echo-args.ts`, that returns its
arguments) is packed and installed with the CLI and used under Bun; with no JavaScript
runtime at all the same plugin installs degraded, says what to install, and its skill works."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .conftest import ALPHA_ID, ALPHA_TEXT, LibraryService, Space, require, write_plugin
from .guide_examples import EXTENSIONS, PLUGIN, plugin_files

CODE = [(kind, stem) for kind, stem in EXTENSIONS if stem != "word-count"]
ARGS = ["production", "Release 4.9", "--dry-run"]


def guide_plugin(tmp_path: Path) -> Path:
    files = plugin_files("ts")
    del files["tools/word-count.mjs"]
    return write_plugin(tmp_path / "src" / PLUGIN, files)


def pack_and_install(space: Space, tmp_path: Path) -> str:
    zip_path = tmp_path / "hello-space-1.0.0.zip"
    space.ok("plugins", "pack", str(guide_plugin(tmp_path)), "-o", str(zip_path))
    return space.ok("plugins", "install", "--yes", str(zip_path)).stdout


def extension_lines(info: str) -> dict[str, str]:
    return {line.split()[1]: line.split()[0] for line in info.splitlines() if line.strip().startswith(
        ("active ", "failed ", "disabled ", "inactive ")) and f"plugin:{PLUGIN}:" in line}


def test_the_guide_plugin_installs_and_runs_under_bun(tmp_path: Path, library: LibraryService) -> None:
    bun = require("bun")
    home = tmp_path / "home"
    home.mkdir()
    space = Space(home, bun.path_env(), bun)
    assert "Status: active" in pack_and_install(space, tmp_path)
    space.ok("plugins", "settings", PLUGIN, f"endpoint={library.url}")
    info = space.ok("plugins", "info", PLUGIN).stdout
    assert "  status:        active" in info, info
    expected = {f"plugin:{PLUGIN}:{kind}:{stem}" for kind, stem in CODE}
    expected |= {f"plugin:{PLUGIN}:skill:release-checklist", f"plugin:{PLUGIN}:settings:config"}
    assert extension_lines(info) == dict.fromkeys(expected, "active"), info

    assert "success: Hello, LLM Space!" in space.ok("plugins", "run-command", PLUGIN, "hello").stdout
    space.ok("plugins", "settings", PLUGIN, "audience=Team")
    assert "success: Hello, Team!" in space.ok("plugins", "run-command", PLUGIN, "hello").stdout

    (space.workspace / "docs").mkdir(parents=True)
    (space.workspace / "docs" / "plan.md").write_text("# Plan\n\nShip it.\n", encoding="utf-8")
    out = space.ok("plugins", "call-tool", PLUGIN, "read_project_file", '{"path": "docs/plan.md"}').stdout
    assert json.loads(out) == {"path": "docs/plan.md", "content": "# Plan\n\nShip it.\n", "truncated": False}

    line = 'sync-active-thread production "Release 4.9" --dry-run'
    library.titles["release.json"] = "Release 4.9"
    space.write_thread("release.json")
    proc = space.ok("plugins", "run-command", PLUGIN, line, "--thread", "release.json")
    assert "success: Updated release.json." in proc.stdout
    assert "[fetching] Fetching production metadata…" in proc.stderr  # args[0] is "production"
    assert space.read_thread("Release 4.9.json")["title"] == "Release 4.9"
    # the same palette line gives the test command exactly those three arguments
    proc = space.ok("plugins", "run-command", PLUGIN, line.replace("sync-active-thread", "echo-args"),
                    "--thread", "Release 4.9.json")
    assert f"success: {json.dumps(ARGS, separators=(',', ':'))}" in proc.stdout.splitlines(), proc.stdout

    mark = library.mark()
    imported = Path(space.ok("open-url", f"llm-space://threads/team-library/{ALPHA_ID}").stdout.strip())
    assert imported.parent == space.workspace / "imported" and imported.is_file()
    assert json.loads(imported.read_text(encoding="utf-8"))["context"]["messages"][0]["content"][0]["text"] == ALPHA_TEXT
    assert [r.path for r in library.since(mark)] == ["/threads/project%2Falpha%3Frevision%3Dlatest",
                                                     "/threads/project%2Falpha%3Frevision%3Dlatest/content"]


def test_without_a_javascript_runtime_the_plugin_is_degraded_and_its_skill_works(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    space = Space(home, "/nonexistent")  # no bun, no node: the CLI runs by its absolute path
    assert sys.executable.startswith("/")
    assert "Status: degraded" in pack_and_install(space, tmp_path)
    info = space.ok("plugins", "info", PLUGIN).stdout
    assert "  status:        degraded" in info, info
    states = extension_lines(info)
    code = {f"plugin:{PLUGIN}:{kind}:{stem}" for kind, stem in CODE}
    assert {cid for cid, state in states.items() if state == "failed"} == code, info
    assert states[f"plugin:{PLUGIN}:skill:release-checklist"] == "active"
    assert states[f"plugin:{PLUGIN}:settings:config"] == "active"
    lines = info.splitlines()
    for cid in code:  # each failed extension says what to install
        reason = lines[next(i for i, x in enumerate(lines) if cid in x) + 1]
        assert "Bun" in reason and "Node" in reason, info

    listing = space.ok("skills", "list").stdout
    row = next(x for x in listing.splitlines() if x.startswith("release-checklist "))
    assert row.split()[1] == "yes", listing
    shown = space.ok("skills", "show", "release-checklist").stdout
    assert "Compare every item with the supplied release notes." in shown

"""`llmspace plugins new NAME --lang ts`: the TypeScript template packs, installs and runs its
command and tool as it is, under Bun and under Node 22 (the runtimes that run `.ts`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import Space, require


@pytest.mark.parametrize("name", ["bun", "node22"])
def test_the_typescript_scaffold_installs_and_runs_its_command_and_tool(tmp_path: Path, name: str) -> None:
    runtime = require(name)
    home = tmp_path / "home"
    home.mkdir()
    space = Space(home, runtime.path_env(), runtime)
    space.ok("plugins", "new", "@acme/echo-kit", "--lang", "ts", "--dir", str(tmp_path / "src"))
    folder = tmp_path / "src" / "@acme" / "echo-kit"
    assert (folder / "commands" / "greet.ts").is_file() and not list(folder.rglob("*.py"))
    assert "All 15 checks passed." in space.ok("plugins", "check", str(folder)).stdout
    zip_path = tmp_path / "echo-kit.zip"
    space.ok("plugins", "pack", str(folder), "-o", str(zip_path))
    assert "Status: active" in space.ok("plugins", "install", "--yes", str(zip_path)).stdout

    proc = space.ok("plugins", "run-command", "@acme/echo-kit", "greet 'Ada Lovelace'")
    assert "success: Hello, Ada Lovelace!" in proc.stdout.splitlines()
    assert "[greeting] Greeting Ada Lovelace…" in proc.stderr.splitlines()
    space.ok("plugins", "settings", "@acme/echo-kit", "greeting=Welcome")
    proc = space.run("plugins", "run-command", "@acme/echo-kit", "Echo Kit greet")
    assert proc.returncode == 0 and proc.stdout.startswith("warning: Usage: greet"), proc.stdout + proc.stderr
    assert "success: Welcome, Ada!" in space.ok("plugins", "run-command", "@acme/echo-kit", "greet Ada").stdout

    out = space.ok("plugins", "call-tool", "@acme/echo-kit", "echo_text", '{"text": "hi", "times": 2, "uppercase": true}')
    assert json.loads(out.stdout) == {"text": "HI HI", "length": 2}

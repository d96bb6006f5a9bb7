"""The plugin platform end to end through the command line, from a fresh data root.

A plugin ZIP with two skills, a stdio MCP server (a real `mcp` server script shipped in
the plugin, started with this interpreter) and a model provider (a loopback Chat
Completions server) is packed and installed; its settings are changed and read back;
its skill shows in `skills list` and in `render`, its MCP tool answers `mcp call`, its
provider streams a `run`. Disabling the plugin takes all three away from new runs with a
clear message; enabling it brings them back, with a skill switched off before still off.
Every command goes through `llmspace.cli.main` in this process; the files of the plugin
are never rewritten.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from llmspace.cli import main
from tests.support.llm_server import LoopbackLLM, Turn

NAME = "acme-kit"
MCP_ID = f"plugin:{NAME}:mcp:greeter"
PROVIDER = f"plugin:{NAME}:model-provider:loop"
KEY = "acme-secret-key-0123456789"

SERVER = '''\
import sys

from mcp.server import MCPServer

GREETING = sys.argv[1] if len(sys.argv) > 1 else "hello"
server = MCPServer("acme-greeter", log_level="WARNING")


@server.tool()
def greet() -> str:
    """Say the configured greeting."""
    return f"{GREETING} from acme"


if __name__ == "__main__":
    server.run("stdio")
'''

SCHEMA = {"type": "object", "properties": {
    "endpoint": {"type": "string", "title": "Model endpoint", "default": "http://127.0.0.1:9/v1"},
    "greeting": {"type": "string", "default": "hello"},
}}
MCP_JSON = {"servers": [{"id": "greeter", "name": "Acme Greeter", "transport": "stdio",
                         "command": "$ACME_PYTHON", "args": ["server.py", "${settings.greeting}"]}]}
MODELS_JSON = {"providers": [{"id": "loop", "name": "Acme Loop", "api": "openai-completions",
                              "baseUrl": "${settings.endpoint}", "apiKey": "$ACME_KEY",
                              "models": [{"id": "acme-1", "name": "Acme One"}]}]}


def skill(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n"


def write_plugin(folder: Path) -> None:
    files = {
        "package.json": json.dumps({"name": NAME, "version": "1.0.0", "engines": {"llm-space": ">=4.7.1"}}),
        "config.schema.json": json.dumps(SCHEMA),
        "mcp.json": json.dumps(MCP_JSON),
        "models.json": json.dumps(MODELS_JSON),
        "server.py": SERVER,
        "skills/release-notes/SKILL.md": skill("release-notes", "Write release notes."),
        "skills/triage/SKILL.md": skill("triage", "Triage incoming bugs."),
    }
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")


def write_thread(home: Path) -> None:
    thread = {"title": "agent", "context": {
        "systemPrompt": "Skills:\n{{ available_skills }}",
        "variables": {"available_skills": {"type": "skills", "skillNames": [], "format": "markdown-list", "indent": 0}},
        "messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}]}],
    }}
    path = home / "workspace" / "agent.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(thread), encoding="utf-8")


def ask_again(home: Path) -> None:
    """Append a user message (the thread ends with the last reply), keeping the saved model."""
    path = home / "workspace" / "agent.json"
    data = json.loads(path.read_text("utf-8"))
    assert data["model"] == {"provider": PROVIDER, "id": "acme-1"}
    data["context"]["messages"].append({"id": "u2", "role": "user", "content": [{"type": "text", "text": "again"}]})
    path.write_text(json.dumps(data), encoding="utf-8")


class Cli:
    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys

    def __call__(self, *args: str, code: int = 0) -> tuple[str, str]:
        self.capsys.readouterr()
        got = main(list(args))
        out, err = self.capsys.readouterr()
        assert got == code, f"llmspace {' '.join(args)} -> {got}\nstdout:\n{out}\nstderr:\n{err}"
        return out, err


@pytest.fixture
def cli(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))  # no skills of the real user
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")
    monkeypatch.setenv("ACME_PYTHON", sys.executable)
    monkeypatch.setenv("ACME_KEY", KEY)
    return Cli(capsys)


def rendered_skills(cli: Cli) -> str:
    out, _ = cli("render", "agent.json")
    return out


def test_install_use_disable_and_enable_a_plugin_with_a_skill_an_mcp_server_and_a_provider(
        cli: Cli, home: Path, tmp_path: Path) -> None:
    source = tmp_path / "src" / NAME
    write_plugin(source)
    originals = {f: (source / f).read_bytes() for f in ("mcp.json", "models.json", "skills/triage/SKILL.md")}
    package = tmp_path / "acme.zip"
    cli("plugins", "pack", str(source), "-o", str(package))
    out, _ = cli("plugins", "install", "--yes", str(package))
    assert "Status: active" in out
    write_thread(home)

    with LoopbackLLM() as srv:
        # settings round-trip through plugins.json and into the interpolated mcp.json / models.json
        cli("plugins", "settings", NAME, f"endpoint={srv.base_url}", "greeting=howdy")
        saved = json.loads((home / "settings" / "plugins.json").read_text("utf-8"))
        assert saved["plugins"][NAME] == {"enabled": True, "settings": {"endpoint": srv.base_url, "greeting": "howdy"},
                                          "capabilities": []}  # granted at install: it asked for nothing
        out, _ = cli("plugins", "settings", NAME)
        assert json.dumps(srv.base_url) in out and '"howdy"' in out

        out, _ = cli("plugins", "list")
        assert any(line.split()[:3] == [NAME, "1.0.0", "active"] for line in out.splitlines()), out

        out, _ = cli("skills", "list")
        assert "release-notes" in out and f"plugin:{NAME}" in out
        skills = rendered_skills(cli)
        assert "release-notes" in skills and "triage" in skills

        out, _ = cli("mcp", "list")
        assert MCP_ID in out and "Acme Greeter" in out
        out, _ = cli("mcp", "call", MCP_ID, "greet", "{}")
        assert out.splitlines()[0] == "howdy from acme"
        out, _ = cli("mcp", "remove", MCP_ID, code=1)

        out, _ = cli("models")
        assert f"{PROVIDER}/acme-1" in out
        srv.push(Turn(text="Hello from the plugin provider"))
        out, _ = cli("run", "agent.json", "--provider", PROVIDER, "--model", "acme-1")
        assert "Hello from the plugin provider" in out
        request = srv.requests[-1]
        assert request.body_json["model"] == "acme-1"
        assert request.headers.get("Authorization") == f"Bearer {KEY}"

        # one plugin skill switched off by the user, then the whole plugin
        cli("skills", "disable", "triage")
        _, err = cli("plugins", "disable", NAME)
        skills = rendered_skills(cli)
        assert "release-notes" not in skills and "triage" not in skills
        _, err = cli("mcp", "call", MCP_ID, "greet", "{}", code=1)
        assert f"unavailable (plugin {NAME} is disabled)" in err
        _, err = cli("run", "agent.json", "--provider", PROVIDER, "--model", "acme-1", code=1)
        assert f"unavailable (plugin {NAME} is disabled)" in err
        ask_again(home)
        _, err = cli("run", "agent.json", code=1)  # the thread saved the plugin model
        assert f"Provider {PROVIDER!r} is unavailable (plugin {NAME} is disabled)" in err

        cli("plugins", "enable", NAME)
        skills = rendered_skills(cli)
        assert "release-notes" in skills and "triage" not in skills  # the earlier choice is kept
        out, _ = cli("mcp", "call", MCP_ID, "greet", "{}")
        assert out.splitlines()[0] == "howdy from acme"
        srv.push(Turn(text="Back again"))
        out, _ = cli("run", "agent.json")
        assert "Back again" in out

        cli("plugins", "settings", NAME, "greeting=bonjour")
        out, _ = cli("mcp", "call", MCP_ID, "greet", "{}")
        assert out.splitlines()[0] == "bonjour from acme"

    installed = home / "plugins" / NAME
    assert {f: (installed / f).read_bytes() for f in originals} == originals

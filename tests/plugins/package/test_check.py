"""`check DIR`: the §17 checklist items that need no code to run, one line per item, on a
good and a bad plugin folder."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import pytest

from llmspace.plugins.package.check import CheckItem, check_plugin, failed, format_report

from ..zips import manifest, plugin_tree


def png(width: int = 16, height: int = 16) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\0" + b"\0\0\0" * width for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


GOOD_MODELS = {"providers": [{
    "id": "example-cloud", "name": "Example Cloud", "api": "openai-completions",
    "baseUrl": "${settings.endpoint}", "apiKey": "$EXAMPLE_MODEL_API_KEY",
    "headers": {"Authorization": "Bearer ${settings.token}"},
    "models": [{"id": "chat-1", "name": "Chat 1", "api": "openai-completions", "reasoning": False, "input": ["text"],
                "contextWindow": 128000, "maxTokens": 8192, "cost": {"input": 0, "output": 0}}],
}]}
GOOD_MCP = {"servers": [
    {"id": "weather", "name": "Weather", "transport": "stdio", "command": "bun", "args": ["run", "x.mjs"],
     "env": {"WEATHER_API_TOKEN": "$EXAMPLE_WEATHER_TOKEN"}},
    {"id": "kb", "name": "KB", "transport": "streamableHttp", "url": "${settings.endpoint}/mcp",
     "headers": {"Authorization": "$EXAMPLE_API_TOKEN"}},
]}
GOOD_SCHEMA = {"type": "object", "required": ["endpoint"], "properties": {
    "endpoint": {"type": "string", "default": "https://api.example.com"},
    "token": {"type": "string", "format": "password"},
    "net": {"type": "object", "properties": {"timeout": {"type": "integer", "default": 30}}},
}}


def good_plugin(root: Path) -> Path:
    return plugin_tree(root / "@example" / "team-tools", {
        "package.json": manifest("@example/team-tools", "1.0.0", engines={"llm-space": ">=4.7.1"},
                                 llmSpace={"capabilities": []}),
        "icon.png": png(),
        "config.schema.json": json.dumps(GOOD_SCHEMA),
        "models.json": json.dumps(GOOD_MODELS),
        "mcp.json": json.dumps(GOOD_MCP),
        "tools/project-info.ts": ("export default class ProjectInfo {\n  name = \"project_info\";\n"
                                  "  description = \"Facts about the project.\";\n"
                                  "  parameters = {type: \"object\", properties: {}, additionalProperties: false};\n"
                                  "  async execute() { return {}; }\n}\n"),
        "commands/hello.py": "class Hello:\n    display_name = 'Say hello'\n\n    def execute(self, context):\n"
                             "        return None\n",
        "skills/review/SKILL.md": "---\nname: review\ndescription: Review.\n---\n",
        "data/state.json": "{}",
    })


def test_a_good_plugin_passes_every_item(tmp_path: Path) -> None:
    items = check_plugin(good_plugin(tmp_path))
    assert failed(items) == []
    report = format_report(items)
    assert report.splitlines() == [
        "PASS  package.json  a JSON object",
        "PASS  name          '@example/team-tools' matches the folder",
        "PASS  version       1.0.0 is SemVer",
        "PASS  engines       '>=4.7.1' is a valid range; it includes LLM Space 4.9.0",
        "PASS  icon          icon.png is a PNG within the limits",
        "PASS  extensions    files at the discovered paths (1 command, 2 mcp, 1 model-provider, 1 skill, 1 tool)",
        "PASS  links         no symbolic links or special files",
        "PASS  settings      config.schema.json: 3 fields, defaults valid",
        "PASS  models.json   providers: 1, required fields present",
        "PASS  mcp.json      servers: 2, required fields present",
        "PASS  secrets       no literal keys or tokens in mcp.json / models.json",
        "PASS  capabilities  declared none, as the code uses",
        "All 12 checks passed.",
    ]


def test_a_minimal_plugin_passes_with_optional_files_absent(tmp_path: Path) -> None:
    folder = plugin_tree(tmp_path / "hello-space", {"package.json": manifest("hello-space", "1.0.0"),
                                                    "commands/hello.ts": "export default class {}\n"})
    items = {i.label: i for i in check_plugin(folder)}
    assert not failed(list(items.values()))
    assert items["icon"].reason == "no icon.png (the default icon is shown)"
    assert items["models.json"].reason == "no models.json"


def bad_plugin(root: Path) -> Path:
    models = {"providers": [{"id": "cloud", "name": "Cloud", "api": "google-gemini", "apiKey": "sk-live-0123456789abcdef",
                             "models": [{"id": "m", "contextWindow": -1}]}]}
    mcp = {"servers": [{"id": "kb", "name": "KB", "transport": "http", "headers": {"X-Api-Key": "hunter2-hunter2"}},
                       {"id": "local", "name": "Local", "transport": "stdio", "env": {"GITHUB_TOKEN": "ghp_" + "a" * 36}}]}
    folder = plugin_tree(root / "weather", {
        "package.json": manifest("weather-kit", "1.2", engines={"llm-space": ">=>4"}),
        "icon.png": b"GIF89a not a png",
        "config.schema.json": json.dumps({"type": "object", "properties": {"n": {"type": "integer", "default": "ten"}}}),
        "models.json": json.dumps(models),
        "mcp.json": json.dumps(mcp),
        "commands/admin/open.ts": "export default class {}\n",
        "tools/now.ts": "export default class {}\n",
    })
    (folder / "tools" / "later.ts").symlink_to(folder / "tools" / "now.ts")
    return folder


def test_a_bad_plugin_fails_each_item_with_its_reason(tmp_path: Path) -> None:
    items = {i.label: i for i in check_plugin(bad_plugin(tmp_path))}
    assert items["package.json"].ok
    reasons = {label: i.reason for label, i in items.items() if not i.ok}
    assert set(reasons) == {"name", "version", "engines", "icon", "extensions", "links", "settings", "models.json",
                            "mcp.json", "secrets"}
    assert reasons["name"] == "\"name\" is 'weather-kit' but the folder is 'weather/'; install it as weather-kit/"
    assert "found '1.2'" in reasons["version"]
    assert "'>=>4' is not a SemVer range" in reasons["engines"]
    assert "not a PNG" in reasons["icon"]
    assert "commands/admin/ was ignored: only direct children of commands/ are discovered" in reasons["extensions"]
    assert "tools/later.ts: tools/later.ts is a symbolic link" in reasons["extensions"]
    assert reasons["links"] == "tools/later.ts is a symbolic link"
    assert "default" in reasons["settings"] and "'ten'" in reasons["settings"]
    models = reasons["models.json"]
    assert "providers[0] (cloud) needs a non-empty string 'baseUrl'" in models
    assert "api 'google-gemini' is not supported (use anthropic-messages, openai-completions, openai-responses)" in models
    assert "providers[0] (cloud).models[0] needs a non-empty string 'name'" in models
    assert "'contextWindow' must be a positive integer" in models
    assert "servers[0] (kb): transport must be one of stdio, streamableHttp, sse" in reasons["mcp.json"]
    assert "servers[1] (local) needs a non-empty string 'command'" in reasons["mcp.json"]
    secrets = reasons["secrets"]
    assert "mcp.json.servers[0].headers.X-Api-Key holds a literal value" in secrets
    assert "mcp.json.servers[1].env.GITHUB_TOKEN looks like a key or token" in secrets
    assert "models.json.providers[0].apiKey looks like a key or token" in secrets
    assert "hunter2" not in secrets and "sk-live" not in secrets and "ghp_" not in secrets
    report = format_report(list(items.values()))
    assert report.splitlines()[-1] == "10 of 12 checks failed."
    assert all(line.startswith(("PASS  ", "FAIL  ", "WARN  ")) for line in report.splitlines()[:-1])


def test_unreadable_json_files_fail_their_item(tmp_path: Path) -> None:
    folder = plugin_tree(tmp_path / "kit", {"package.json": "{oops", "models.json": "[1,", "config.schema.json": "[]"})
    items = {i.label: i for i in check_plugin(folder)}
    assert not items["package.json"].ok and "malformed JSON" in items["package.json"].reason
    assert not items["models.json"].ok and "malformed JSON" in items["models.json"].reason
    assert not items["settings"].ok and "must hold a JSON object" in items["settings"].reason
    assert not items["name"].ok


@pytest.mark.parametrize(("value", "ok"), [
    ("$TOKEN", True), ("${settings.token}", True), ("Bearer ${settings.token}", True), ("", True),
    ("plain-literal-token", False), ("Bearer abcdefgh12345678", False), ("sk-abcdefgh12345", False),
])
def test_secret_values_need_an_env_or_settings_reference(tmp_path: Path, value: str, ok: bool) -> None:
    mcp = {"servers": [{"id": "s", "name": "S", "transport": "sse", "url": "https://x", "headers": {"Authorization": value}}]}
    folder = plugin_tree(tmp_path / "kit", {"package.json": manifest("kit", "1.0.0"), "mcp.json": json.dumps(mcp)})
    secrets = next(i for i in check_plugin(folder) if i.label == "secrets")
    assert secrets.ok is ok
    if value:
        assert value not in secrets.reason


def test_an_engines_range_without_this_app_is_a_failure(tmp_path: Path) -> None:
    folder = plugin_tree(tmp_path / "kit", {"package.json": manifest("kit", "1.0.0", engines={"llm-space": "^5.0.0"})})
    item = next(i for i in check_plugin(folder) if i.label == "engines")
    assert item == CheckItem("engines", False, "'^5.0.0' does not include LLM Space 4.9.0, so the plugin would be "
                                              "incompatible; for example \">=4.9.0\"")

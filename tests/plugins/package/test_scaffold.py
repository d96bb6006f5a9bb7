"""`scaffold_plugin`: a new plugin folder that passes `plugins check` and discovery as it is,
whose Python files compile and behave (the TypeScript ones: guide-style, and run under Bun
and Node 22 in tests/plugins/conformance/test_scaffold_ts.py), and that never touches an
existing non-empty folder."""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot
from llmspace.plugins.errors import PluginError
from llmspace.plugins.package.check import check_plugin, failed, format_report
from llmspace.plugins.package.pack import pack
from llmspace.plugins.package.scaffold import display_name_of, scaffold_plugin
from llmspace.plugins.service import PluginService

NAMES = ["echo-kit", "@acme/echo-kit"]
FILES = {"package.json", "config.schema.json", "tools/echo-text.py", "commands/greet.py", "README.md",
         "conftest.py", "tests/test_plugin.py"}  # its tests run with `llmspace plugins test` (test_plugin_testing.py)
FILES_TS = {"package.json", "config.schema.json", "tools/echo-text.ts", "commands/greet.ts", "README.md",
            "tests/plugin.test.ts"}
LANGS = {"py": FILES, "ts": FILES_TS}


def files_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("lang", sorted(LANGS))
@pytest.mark.parametrize("name", NAMES)
def test_the_new_plugin_passes_every_check(tmp_path: Path, name: str, lang: str) -> None:
    folder = scaffold_plugin(tmp_path, name, lang=lang)
    assert folder == tmp_path.joinpath(*name.split("/"))
    assert files_under(folder) == LANGS[lang]
    items = check_plugin(folder)
    assert failed(items) == [], format_report(items)
    assert "1 command, 1 tool" in next(i.reason for i in items if i.label == "extensions")


@pytest.mark.parametrize("lang", sorted(LANGS))
@pytest.mark.parametrize("name", NAMES)
def test_the_new_plugin_is_discovered_active_with_its_extensions(home: Path, name: str, lang: str) -> None:
    scaffold_plugin(home / "plugins", name, lang=lang)
    record = PluginService(DataRoot(home)).get(name)
    assert record.status == "active", record.diagnostics
    assert {(e.kind, e.id, e.status, e.path.suffix) for e in record.extensions} == {
        ("tool", "echo-text", "active", f".{lang}"), ("command", "greet", "active", f".{lang}"),
        ("settings", "config", "active", ".json")}
    assert record.has_settings_form
    assert record.manifest is not None and record.manifest.version == "0.1.0"


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_package_json_and_settings_schema(tmp_path: Path, lang: str) -> None:
    folder = scaffold_plugin(tmp_path, "@acme/echo-kit", lang=lang)
    pkg = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    assert pkg["name"] == "@acme/echo-kit" and pkg["version"] == "0.1.0"
    assert pkg["displayName"] == "Echo Kit" and pkg["description"]
    assert pkg["engines"] == {"llm-space": ">=4.9.0"}
    schema = json.loads((folder / "config.schema.json").read_text(encoding="utf-8"))
    assert schema["properties"] == {"greeting": {
        "type": "string", "title": "Greeting", "description": "The word the greet command starts with.", "default": "Hello"}}


def test_the_python_files_compile(tmp_path: Path) -> None:
    folder = scaffold_plugin(tmp_path, "echo-kit")
    for rel in ("tools/echo-text.py", "commands/greet.py"):
        py_compile.compile(str(folder / rel), cfile=str(tmp_path / "out.pyc"), doraise=True)


def test_the_readme_says_how_to_try_and_install_it(tmp_path: Path) -> None:
    readme = (scaffold_plugin(tmp_path, "@acme/echo-kit") / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# Echo Kit\n")
    assert "llmspace plugins pack ." in readme and "acme-echo-kit-0.1.0.zip" in readme
    assert "plugin:@acme/echo-kit:tool:echo-text" in readme


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_the_new_plugin_packs(tmp_path: Path, lang: str) -> None:
    folder = scaffold_plugin(tmp_path / "src", "echo-kit", lang=lang)
    (tmp_path / "dist").mkdir()
    result = pack(folder, tmp_path / "dist")
    assert result.path.name == "echo-kit-0.1.0.zip" and result.files == len(LANGS[lang])


# -- the TypeScript template -----------------------------------------------------------------

def test_the_typescript_files_are_written_in_the_guides_style(tmp_path: Path) -> None:
    folder = scaffold_plugin(tmp_path, "@acme/echo-kit", lang="ts")
    tool = (folder / "tools" / "echo-text.ts").read_text(encoding="utf-8")
    assert 'import type { PluginToolContext, PluginToolExtension } from "@llm-space/core";' in tool
    assert "export default class EchoTextTool implements PluginToolExtension {" in tool
    assert 'name = "echo_text";' in tool and "additionalProperties: false," in tool and "strict = true;" in tool
    assert "async execute(context: PluginToolContext, args: Record<string, unknown>) {" in tool
    assert "plugin:@acme/echo-kit:tool:echo-text" in tool
    command = (folder / "commands" / "greet.ts").read_text(encoding="utf-8")
    assert 'import type { PluginCommandContext, PluginCommandExtension } from "@llm-space/core";' in command
    assert "export default class GreetCommand implements PluginCommandExtension {" in command
    assert 'displayName = "Echo Kit greet";' in command
    assert "async execute(context: PluginCommandContext, args: readonly string[]) {" in command
    assert "await context.report({ phase: \"greeting\"" in command and "context.createResult(" in command
    assert "@NAME@" not in tool + command and "@DISPLAY" not in tool + command  # every placeholder filled
    assert "{{" not in tool + command  # no str.format doubling left behind


def test_the_typescript_readme_names_its_files_and_the_runtime(tmp_path: Path) -> None:
    readme = (scaffold_plugin(tmp_path, "@acme/echo-kit", lang="ts") / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# Echo Kit\n") and "TypeScript plugin template" in readme
    assert "`tools/echo-text.ts`" in readme and "`commands/greet.ts`" in readme and ".py" not in readme
    assert "Bun" in readme and "Node.js 22.6" in readme and "llmspace plugins runtime" in readme
    assert "acme-echo-kit-0.1.0.zip" in readme and "plugin:@acme/echo-kit:tool:echo-text" in readme
    assert '\'{"text": "hi", "times": 2}\'' in readme


# -- the generated code, run with a stand-in context (the real host runs it in the app) ----

class FakeContext:
    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings
        self.reports: list[Any] = []

    def report(self, phase: Any, message: str | None = None) -> None:
        self.reports.append(phase)

    def create_result(self, value: Any) -> dict[str, Any]:
        return {"result": value}


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"scaffolded_{path.stem.replace('-', '_')}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def only_class(module: ModuleType) -> Any:
    classes = [v for v in vars(module).values() if isinstance(v, type) and v.__module__ == module.__name__]
    assert len(classes) == 1  # the default export: the only class of the file
    return classes[0]


def test_the_tool_echoes_with_a_restrictive_schema(tmp_path: Path) -> None:
    tool = only_class(load(scaffold_plugin(tmp_path, "echo-kit") / "tools" / "echo-text.py"))()
    assert tool.name == "echo_text" and tool.strict is True and tool.description
    params = tool.parameters
    assert params["type"] == "object" and params["additionalProperties"] is False and params["required"] == ["text"]
    ctx = FakeContext({"greeting": "Hello"})
    assert tool.execute(ctx, {"text": "hi", "times": 2, "uppercase": True}) == {"text": "HI HI", "length": 2}
    with pytest.raises(ValueError, match="times"):
        tool.execute(ctx, {"text": "hi", "times": 9})
    with pytest.raises(ValueError, match="text"):
        tool.execute(ctx, {"text": ""})


def test_the_command_uses_settings_arguments_report_and_create_result(tmp_path: Path) -> None:
    cls = only_class(load(scaffold_plugin(tmp_path, "@acme/echo-kit") / "commands" / "greet.py"))
    command = cls()
    assert command.display_name == "Echo Kit greet" and command.description
    ctx = FakeContext({"greeting": "Welcome"})
    assert command.execute(ctx, ("Ada", "Lovelace")) == {"result": {"level": "success", "message": "Welcome, Ada Lovelace!"}}
    assert ctx.reports == [{"phase": "greeting", "message": "Greeting Ada Lovelace…"}]
    assert command.execute(FakeContext({}), ())["result"]["level"] == "warning"


# -- refusals --------------------------------------------------------------------------------

def test_a_non_empty_folder_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "echo-kit"
    target.mkdir()
    (target / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(PluginError, match="already exists and is not empty"):
        scaffold_plugin(tmp_path, "echo-kit")
    assert files_under(target) == {"notes.txt"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["echo-kit"]  # no staging folder left behind


def test_an_empty_folder_is_filled(tmp_path: Path) -> None:
    (tmp_path / "echo-kit").mkdir()
    assert files_under(scaffold_plugin(tmp_path, "echo-kit")) == FILES


def test_a_file_in_the_way_is_refused(tmp_path: Path) -> None:
    (tmp_path / "echo-kit").write_text("x", encoding="utf-8")
    with pytest.raises(PluginError, match="not a folder"):
        scaffold_plugin(tmp_path, "echo-kit")


@pytest.mark.parametrize("name", ["Echo", "_kit", ".kit", "a/b/c", "", "echo kit", "node_modules", "@/x", "kit/"])
def test_invalid_names_are_refused_before_anything_is_written(tmp_path: Path, name: str) -> None:
    with pytest.raises(PluginError, match="is not a valid plugin name"):
        scaffold_plugin(tmp_path, name)
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_language_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserFacingError, match="Unknown plugin language 'rb'") as caught:
        scaffold_plugin(tmp_path, "echo-kit", lang="rb")
    assert caught.value.hint is not None and '"ts"' in caught.value.hint
    assert list(tmp_path.iterdir()) == []


def test_plugins_new_lang_ts_scaffolds_typescript(home: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from llmspace.cli import main

    assert main(["plugins", "new", "ts-kit", "--lang", "ts", "--dir", str(tmp_path)]) == 0
    assert f"Created {tmp_path / 'ts-kit'}" in capsys.readouterr().out
    assert files_under(tmp_path / "ts-kit") == FILES_TS


def test_a_failure_while_writing_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_rename(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "rename", broken_rename)
    with pytest.raises(PluginError, match="No space left on device"):
        scaffold_plugin(tmp_path, "echo-kit")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("name", "shown"), [
    ("echo-kit", "Echo Kit"), ("@acme/team_tools", "Team Tools"), ("weather.kit", "Weather Kit"), ("x", "X"),
])
def test_display_name_of(name: str, shown: str) -> None:
    assert display_name_of(name) == shown

"""Strings a plugin sends to the app (notify, report, open_link URLs, command results and
errors, tool results, display names) reach the terminal and Tk without C0/C1 control
characters or DEL: no window titles, screen clears or colour codes from a plugin."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from llmspace.app import App
from llmspace.cli import main

from .code_plugins import code_plugin

CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
ESC = "\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\x7f\\r"

LOUD = f'''
ESC = "{ESC}"

class Loud:
    display_name = "Loud" + ESC
    description = "Says things" + ESC

    def execute(self, context, arguments):
        mode = arguments[0] if arguments else "result"
        context.notify("note" + ESC, "warning")
        context.open_link("https://example.com/x" + ESC)
        context.report("phase" + ESC, "step" + ESC)
        if mode == "raise":
            raise RuntimeError("boom" + ESC)
        if mode == "value":
            return {{"text": "v" + ESC}}
        return context.create_result({{"level": "success", "message": "done" + ESC + "\\nline2\\tcol"}})
'''

SHOUT = f'''
ESC = "{ESC}"

class Shout:
    name = "shout"
    description = "Returns text with escapes."
    parameters = {{"type": "object", "properties": {{"fail": {{"type": "boolean"}}}}, "additionalProperties": False}}

    def execute(self, context, args):
        if args.get("fail"):
            raise RuntimeError("tool failed" + ESC)
        return "out" + ESC
'''

STORE = f'''
class Store:
    display_name = "Store{ESC}"
    description = "About{ESC}"
    deep_link_id = "store"
    capabilities = {{"read": True, "write": False}}

    def resolve_latest(self, id, context):
        raise RuntimeError("no such thread{ESC}")

    def read(self, locator, context):
        return {{}}
'''


def _assert_clean(text: str) -> None:
    assert CONTROLS.search(text) is None, repr(text)


@pytest.mark.parametrize("mode", ["result", "value", "raise"])
def test_run_command_prints_no_control_characters_from_the_plugin(home: Path, mode: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code_plugin(home, commands={"loud": LOUD})
    code = main(["plugins", "run-command", "kit", f"loud {mode}"])
    captured = capsys.readouterr()
    _assert_clean(captured.out)
    _assert_clean(captured.err)
    assert "[kit] warning: note]0;pwned[2J31m" in captured.err
    assert "[kit] open: https://example.com/x]0;pwned[2J31m" in captured.err
    assert "[phase]0;pwned[2J31m] step]0;pwned[2J31m" in captured.err
    if mode == "result":
        assert code == 0 and "success: done]0;pwned[2J31m\nline2\tcol" in captured.out
    elif mode == "value":
        assert code == 0 and '"text": "v]0;pwned[2J31m"' in captured.out
    else:
        assert code == 1 and "boom]0;pwned[2J31m" in captured.out


class Recorder:
    """The desktop app's side of the callbacks, recorded (what Tk would show)."""

    def __init__(self) -> None:
        self.shown: list[str] = []

    def notify(self, plugin: str, message: str, level: str) -> None:
        self.shown.append(message)

    def open_link(self, plugin: str, url: str) -> None:
        self.shown.append(url)

    def pick_file(self, plugin: str, options: dict[str, Any]) -> str | None:
        return None

    def host_command(self, plugin: str, command: str, args: Any) -> None:
        return None


def test_the_app_frontend_and_the_outcome_get_clean_text(app: App, home: Path) -> None:
    code_plugin(home, commands={"loud": LOUD})
    recorder = Recorder()
    app.plugin_code.frontend = recorder
    app.plugin_code.ensure_loaded()
    command = next(c for c in app.plugin_code.commands() if c.alias == "loud")
    reports: list[Any] = []
    outcome = command.invoke(["result"], on_report=reports.append)
    assert recorder.shown == ["note]0;pwned[2J31m", "https://example.com/x]0;pwned[2J31m"]
    assert [(r.phase, r.message) for r in reports] == [("phase]0;pwned[2J31m", "step]0;pwned[2J31m")]
    assert outcome.message == "done]0;pwned[2J31m\nline2\tcol"
    assert command.display_name == "Loud]0;pwned[2J31m" and command.description == "Says things]0;pwned[2J31m"
    failed = command.invoke(["raise"])
    assert failed.level == "error" and "boom]0;pwned[2J31m" in failed.message
    _assert_clean(failed.message)


def test_call_tool_prints_no_control_characters_from_the_plugin(home: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    code_plugin(home, tools={"shout": SHOUT})
    assert main(["plugins", "call-tool", "kit", "shout", "{}"]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == "out]0;pwned[2J31m"
    assert main(["plugins", "call-tool", "kit", "shout", '{"fail": true}']) == 1
    captured = capsys.readouterr()
    assert "tool failed]0;pwned[2J31m" in captured.out + captured.err
    _assert_clean(captured.out + captured.err)


def test_storage_names_and_errors_print_no_control_characters(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code_plugin(home, storages={"store": STORE})
    assert main(["storage", "list"]) == 0
    assert main(["storage", "import", "store", "x"]) == 1
    captured = capsys.readouterr()
    _assert_clean(captured.out + captured.err)
    assert "Store]0;pwned[2J31m" in captured.out and "no such thread]0;pwned[2J31m" in captured.err


def test_plugins_list_and_info_print_no_control_characters_from_the_manifest(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from .builders import make_plugin

    esc = "\x1b]0;pwned\x07\x1b[2J\x9b31m\x7f"
    make_plugin(home, "kit", displayName="Kit" + esc, description="About" + esc, author="Me" + esc)
    assert main(["plugins", "list"]) == 0
    assert main(["plugins", "info", "kit"]) == 0
    captured = capsys.readouterr()
    _assert_clean(captured.out + captured.err)
    assert "Kit]0;pwned[2J31m" in captured.out and "About]0;pwned[2J31m" in captured.out


BROKEN = f'''
raise RuntimeError("cannot load{ESC}")
'''

DESCRIBED = f'''
class Described:
    name = "described"
    description = "Describes{ESC}"
    parameters = {{"type": "object", "properties": {{}}, "additionalProperties": False}}

    def execute(self, context, args):
        return "ok"
'''


def test_what_the_host_reports_at_load_prints_no_control_characters(home: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code_plugin(home, tools={"described": DESCRIBED, "broken": BROKEN})
    assert main(["plugins", "info", "kit"]) == 0
    assert main(["tools", "list"]) == 0
    captured = capsys.readouterr()
    _assert_clean(captured.out + captured.err)
    assert "cannot load]0;pwned[2J31m" in captured.out and "Describes]0;pwned[2J31m" in captured.out


RAW = "\x1b]0;pwned\x07\x9b2J"
SKILL = ('---\nname: tidy\ndescription: "Tidies\\e]0;pwned\\a\\x9b2J"\n---\nBody.\n')
TEXT_SCHEMA = {"type": "object", "title": "Kit settings" + RAW, "description": "About" + RAW,
               "properties": {"mode": {"type": "string", "title": "Mode" + RAW, "description": "How" + RAW,
                                       "enum": ["fast", "slow"], "default": "fast"}}}


def _data_plugin(home: Path, **files: Any) -> None:
    from .builders import make_plugin

    server = {"id": "docs", "name": "Docs" + RAW, "description": "Serves docs" + RAW,
              "transport": "stdio", "command": "python3"}
    provider = {"id": "cloud", "name": "Kit Cloud" + RAW, "api": "openai-completions",
                "baseUrl": "http://127.0.0.1:9/v1", "models": [{"id": "kit-1", "name": "Kit One" + RAW}]}
    make_plugin(home, "kit", files={"config.schema.json": TEXT_SCHEMA, "mcp.json": {"servers": [server]},
                                    "models.json": {"providers": [provider]}, "skills/tidy/SKILL.md": SKILL, **files})


def test_what_a_plugin_contributes_as_data_prints_no_control_characters(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _data_plugin(home)
    for argv in (["plugins", "info", "kit"], ["plugins", "settings", "kit"], ["models"],
                 ["models", "--json"], ["mcp", "list"], ["mcp", "list", "--json"], ["skills", "list"],
                 ["skills", "list", "--json"]):
        assert main(argv) == 0, argv
        captured = capsys.readouterr()
        _assert_clean(captured.out + captured.err)
        assert "\\u001b" not in captured.out.lower() and "\\u009b" not in captured.out.lower(), argv
        shown = captured.out.replace("\\u0007", "")
        if argv[0] == "plugins":
            assert "Mode]0;pwned2J" in shown or "About]0;pwned2J" in shown, captured.out
        elif argv[0] == "models":
            assert "Kit One]0;pwned2J" in shown or "Kit Cloud]0;pwned2J" in shown, captured.out
        elif argv[0] == "mcp":
            assert "plugin:kit:mcp:docs" in shown, captured.out
        else:
            assert "Tidies]0;pwned2J" in shown, captured.out


def test_a_contributed_id_with_control_characters_is_refused_with_a_diagnostic(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from .builders import make_plugin

    server = {"id": "docs" + RAW, "name": "Docs", "transport": "stdio", "command": "python3"}
    provider = {"id": "cloud" + RAW, "name": "Cloud", "api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1"}
    make_plugin(home, "kit", files={"mcp.json": {"servers": [server]}, "models.json": {"providers": [provider]}})
    assert main(["plugins", "info", "kit"]) == 0
    assert main(["mcp", "list", "--json"]) == 0
    assert main(["models", "--json"]) == 0
    captured = capsys.readouterr()
    _assert_clean(captured.out + captured.err)
    assert "control character" in captured.out
    assert "failed   plugin:kit:mcp:docs\\u001B]0;pwned" in captured.out  # shown escaped, never renamed
    assert '"plugin:kit:mcp:docs' not in captured.out and '"plugin:kit:model-provider:cloud' not in captured.out


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"mode" + RAW: {"type": "string"}}},
    {"type": "object", "properties": {"mode": {"type": "string", "enum": ["fast" + RAW, "slow"]}}},
])
def test_a_settings_key_or_enum_value_with_control_characters_makes_the_schema_invalid(
        schema: dict[str, Any]) -> None:
    from llmspace.plugins.errors import PluginError
    from llmspace.plugins.settings_form import build_form

    with pytest.raises(PluginError, match="control character") as caught:
        build_form(schema)
    _assert_clean(caught.value.message)

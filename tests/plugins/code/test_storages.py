"""Plugin thread storages and context methods in a real host: import, save, deep links,
validation of what a storage returns, deepLinkId rules, and the workspace confinement of
`read_workspace_file` / `write_workspace_file`."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from llmspace.agent.services import tool_context
from llmspace.app import App
from llmspace.cli import main
from llmspace.core.model import ToolCall, ToolCallInput
from llmspace.core.threadio import thread_from_data
from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot
from llmspace.plugins.code import metadata_cache
from llmspace.plugins.code.calls import plugin_tool_entry_for
from llmspace.plugins.code.storages import find_storage, import_thread, open_deep_link
from llmspace.plugins.hosts.callbacks import ConsoleFrontend

from ..code_plugins import FOLDER_STORAGE, LISTING_STORAGE, code_plugin

BAD_STORAGE = '''
class Bad:
    displayName = "Bad library"
    deepLinkId = "bad"
    capabilities = {"read": True, "write": True}

    def resolveLatest(self, id, context):
        return {"id": id} if id != "no-id" else {"version": 2}

    def read(self, locator, context):
        return {"title": "x", "context": {"messages": [{"role": "robot"}]}}

    def write(self, thread, id, context):
        return "not a locator"
'''

CLASH = '''
class Other:
    display_name = "Other"
    deep_link_id = "folder-lib"
    capabilities = {"read": True}

    def resolve_latest(self, id, context):
        return {"id": id}

    def read(self, locator, context):
        return {"title": "t"}
'''

WRITE_ONLY_WITH_LINK = '''
class W:
    display_name = "W"
    deep_link_id = "w"
    capabilities = {"read": False, "write": True}

    def write(self, thread, id, context):
        return {"id": "1"}
'''

MISSING_METHOD = '''
class R:
    display_name = "R"
    capabilities = {"read": True, "write": False}

    def read(self, locator, context):
        return {}
'''


def _library(home: Path, key: str, thread: dict[str, Any]) -> None:
    folder = home / "library"
    folder.mkdir(exist_ok=True)
    (folder / (key.replace("/", "__") + ".json")).write_text(json.dumps(thread), encoding="utf-8")


def test_a_deep_link_imports_the_thread_into_workspace_imported(app: App, home: Path) -> None:
    code_plugin(home, storages={"folder": FOLDER_STORAGE})
    _library(home, "project/alpha", {"title": "alpha", "context": {"messages": [
        {"id": "m1", "role": "user", "content": [{"type": "text", "text": "hi"}]}]}})
    rel = open_deep_link(app.plugin_code, "llm-space://threads/folder-lib/project/alpha?revision=latest", app.workspace)
    assert rel == "imported/alpha.json"
    assert app.workspace.open(rel).messages[0].text() == "hi"
    again = open_deep_link(app.plugin_code, "llm-space-dev://threads/folder-lib/project/alpha", app.workspace)
    assert again == "imported/alpha-1.json"  # a unique name, nothing overwritten


def test_save_then_import_round_trips_through_the_storage(app: App, home: Path) -> None:
    code_plugin(home, storages={"folder": FOLDER_STORAGE})
    storage = find_storage(app.plugin_code, "plugin:kit:thread-storage:folder", need="write")
    locator = storage.write(thread_from_data({"title": "shared", "context": {"messages": []}}), "team/shared")
    assert locator == {"id": "team/shared"}
    rel = import_thread(find_storage(app.plugin_code, "folder-lib"), "team/shared", app.workspace)
    assert rel == "imported/shared.json"


def test_what_a_storage_returns_is_validated(app: App, home: Path) -> None:
    code_plugin(home, storages={"bad": BAD_STORAGE})
    storage = find_storage(app.plugin_code, "bad")
    with pytest.raises(UserFacingError, match="locator"):
        storage.resolve_latest("no-id")
    with pytest.raises(UserFacingError, match=r"context\.messages\[0\]"):
        import_thread(storage, "x", app.workspace)
    with pytest.raises(UserFacingError, match="locator"):
        storage.write(thread_from_data({"title": "t"}), None)
    assert not (home / "workspace" / "imported").exists() or not list((home / "workspace" / "imported").iterdir())


def test_a_deep_link_id_used_twice_makes_both_storages_inactive(app: App, home: Path) -> None:
    code_plugin(home, storages={"folder": FOLDER_STORAGE})
    code_plugin(home, name="other", storages={"clash": CLASH})
    app.plugin_code.ensure_loaded()
    assert app.plugin_code.storages() == []
    for name, stem in (("kit", "folder"), ("other", "clash")):
        ext = next(e for e in app.plugins.get(name).extensions if e.id == stem)
        assert ext.status == "failed" and "folder-lib" in ext.reason
    app.plugins.disable("other")
    app.plugin_code.ensure_loaded()
    assert [s.deep_link_id for s in app.plugin_code.storages()] == ["folder-lib"]


@pytest.mark.parametrize(("source", "why"), [
    (WRITE_ONLY_WITH_LINK, "readable storages only"),
    (MISSING_METHOD, "resolve"),
])
def test_storage_contracts_are_checked_at_load(app: App, home: Path, source: str, why: str) -> None:
    code_plugin(home, storages={"s": source})
    app.plugin_code.ensure_loaded()
    ext = next(e for e in app.plugins.get("kit").extensions if e.id == "s")
    assert ext.status == "failed" and why in ext.reason


def test_storage_cli_lists_imports_saves_and_opens_urls(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code_plugin(home, storages={"folder": FOLDER_STORAGE})
    _library(home, "a", {"title": "a"})
    assert main(["storage", "list"]) == 0
    assert "plugin:kit:thread-storage:folder  [read/write]  Folder library  llm-space://threads/folder-lib/…" \
        in capsys.readouterr().out
    assert main(["storage", "import", "folder-lib", "a"]) == 0
    assert capsys.readouterr().out.strip() == "Imported imported/a.json"
    assert main(["storage", "save", "plugin:kit:thread-storage:folder", "imported/a.json", "--id", "b"]) == 0
    assert '{"id": "b"}' in capsys.readouterr().out
    assert main(["open-url", "llm-space://threads/folder-lib/b"]) == 0
    assert capsys.readouterr().out.strip() == str(home / "workspace" / "imported" / "b.json")
    assert main(["open-url", "llm-space://threads/nobody/b"]) == 1
    assert "No enabled thread storage handles 'nobody'" in capsys.readouterr().err


def test_storage_cli_lists_items_of_a_listing_storage_and_says_what_an_id_looks_like_otherwise(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code_plugin(home, storages={"folder": FOLDER_STORAGE, "listing": LISTING_STORAGE})
    for key in ("team/plan", "team/review", "notes"):
        _library(home, key, {"title": key})
    assert main(["storage", "list"]) == 0
    out = capsys.readouterr().out
    assert "plugin:kit:thread-storage:listing  [read/write/list]  Listing library" in out
    assert "plugin:kit:thread-storage:folder  [read/write]  Folder library" in out
    assert main(["storage", "list-items", "list-lib"]) == 0
    assert capsys.readouterr().out.splitlines() == ["notes  Notes  (2026-12-01)", "team/plan  Plan  (2026-12-01)",
                                                    "More: --cursor 2"]
    assert main(["storage", "list-items", "list-lib", "--cursor", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "items": [{"id": "team/review", "title": "Review", "updatedAt": "2026-12-01"}], "nextCursor": None}
    assert main(["storage", "list-items", "list-lib", "--query", "team/r"]) == 0
    assert capsys.readouterr().out.splitlines() == ["team/review  Review  (2026-12-01)"]
    assert main(["storage", "list-items", "folder-lib"]) == 1
    err = capsys.readouterr().err
    assert "Folder library cannot list what it holds" in err
    assert "Threads in a folder. The ID Folder library knows the thread by (what follows llm-space://threads/folder-lib/" in err


def _without_list(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_list(v) for k, v in value.items() if not (k == "list" and isinstance(v, bool))}
    return [_without_list(v) for v in value] if isinstance(value, list) else value


def test_metadata_cached_before_storages_reported_list_is_not_used(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code_plugin(home, storages={"listing": LISTING_STORAGE})
    first = App(DataRoot(home))
    try:
        with monkeypatch.context() as patch:
            patch.setattr(metadata_cache, "CACHE_VERSION", 2)  # the cache format before `capabilities.list`
            first.plugin_code.ensure_loaded()
    finally:
        first.close()
    cached = home / "cache" / "plugins" / "kit.python.json"
    cached.write_text(json.dumps(_without_list(json.loads(cached.read_text()))))  # as an older host reported it
    second = App(DataRoot(home))
    try:
        second.plugins.records()
        second.plugin_code.ensure_loaded()
        assert find_storage(second.plugin_code, "list-lib").can_list
    finally:
        second.close()


CONTEXT_TOOL = '''
from llmspace.plugin_api import PluginCallError

class Ctx:
    name = "ctx"
    description = "Uses the context methods."
    parameters = {"type": "object", "properties": {"step": {"type": "string"}, "arg": {"type": "string"},
                  "content": {"type": "string"}}, "required": ["step"], "additionalProperties": False}

    def execute(self, context, args):
        step, arg = args["step"], args.get("arg", "")
        try:
            if step == "notify":
                return context.notify("Heads up")
            if step == "open_link":
                return context.open_link(arg)
            if step == "pick_file":
                return context.pick_file({"title": "Pick"})
            if step == "read":
                return context.read_workspace_file(arg)
            if step == "camel":
                return context.readWorkspaceFile(arg)
            if step == "write":
                return context.write_workspace_file(arg, args["content"])
            if step == "host":
                return context.execute_host_command(arg)
        except PluginCallError as exc:
            return "refused: " + str(exc)
        return "unknown step"
'''


def _ctx_call(app: App, args: dict[str, Any]) -> str:
    app.plugin_code.ensure_loaded()
    spec = next(s for s in app.plugin_code.tool_specs() if s.name == "ctx")
    thread = thread_from_data({"title": "t"})
    tool = plugin_tool_entry_for(spec)
    assert thread.context is None
    from llmspace.core.model import ThreadContext

    thread.context = ThreadContext(tools=[tool])
    out = app.tools.execute(tool, ToolCall(id="c", input=ToolCallInput(name="ctx", arguments=args)),
                            tool_context(app.run_services, thread), None, 60)
    assert out.isError is False, out.text()
    return out.text()


def test_every_context_method_reaches_the_app(app: App, home: Path) -> None:
    code_plugin(home, tools={"ctx": CONTEXT_TOOL})
    stream = io.StringIO()
    app.plugin_code.frontend = ConsoleFrontend(stream)
    (home / "workspace" / "docs").mkdir(parents=True)
    (home / "workspace" / "docs" / "plan.md").write_text("the plan", encoding="utf-8")
    assert _ctx_call(app, {"step": "notify"}) == "null"
    assert _ctx_call(app, {"step": "open_link", "arg": "https://example.com/docs"}) == "null"
    assert _ctx_call(app, {"step": "open_link", "arg": "file:///etc/passwd"}).startswith("refused: open_link opens")
    assert _ctx_call(app, {"step": "pick_file"}).startswith("refused: pick_file needs the desktop app")
    assert _ctx_call(app, {"step": "read", "arg": "docs/plan.md"}) == "the plan"
    assert _ctx_call(app, {"step": "camel", "arg": "docs/plan.md"}) == "the plan"
    assert _ctx_call(app, {"step": "write", "arg": "out/new.md", "content": "written"}) == "null"
    assert (home / "workspace" / "out" / "new.md").read_text(encoding="utf-8") == "written"
    assert _ctx_call(app, {"step": "read", "arg": "../settings/plugins.json"}).startswith("refused: ")
    assert _ctx_call(app, {"step": "write", "arg": "/tmp/escape.md", "content": "x"}).startswith("refused: ")
    assert _ctx_call(app, {"step": "host", "arg": "refreshTree"}) == "null"
    assert _ctx_call(app, {"step": "host", "arg": "deleteEverything"}).startswith("refused: Host command")
    printed = stream.getvalue()
    assert "[kit] Heads up" in printed and "[kit] open: https://example.com/docs" in printed

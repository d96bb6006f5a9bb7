"""The conformance suite: the same behaviours of plugin code, checked through the CLI on
every host — python, bun, node (Node 20: .js/.mjs) and node22 (.ts) — with the guide's
examples (guide_examples.py) installed as `hello-space` in the runtime's language.

Cancellation and timeouts stay in the host-specific suites (tests/plugins/code/test_calls_*.py,
tests/plugin_host/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from llmspace.app import App
from llmspace.paths import DataRoot

from .conftest import ALPHA_ID, ALPHA_TEXT, LibraryService, Runtime, Space
from .guide_examples import EXTENSIONS, PLUGIN

READ_PROJECT_FILE_PARAMETERS = {  # §9, as the guide declares them
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Workspace-relative path, for example docs/plan.md."},
        "maxChars": {"type": "integer", "minimum": 1, "maximum": 50000, "default": 12000},
    },
    "required": ["path"],
    "additionalProperties": False,
}
COMMANDS = {
    "hello": ("Say hello", "Show a local notification."),
    "open-documentation": ("Open example documentation", "Open the public documentation in the default browser."),
    "sync-active-thread": ("Sync active thread", "Fetch the canonical title and apply it to the active Thread."),
    "echo-args": ("Echo arguments", "Test command: returns its palette arguments as JSON."),
}
ALPHA_LINK = f"llm-space://threads/team-library/{ALPHA_ID}"
ALPHA_PATH = "/threads/project%2Falpha%3Frevision%3Dlatest"  # encodeURIComponent of the resource ID


def result_line(stdout: str) -> str:
    """The `level: message` line run-command prints for the outcome."""
    return next(line for line in stdout.splitlines() if line.split(":", 1)[0] in ("success", "warning", "error"))


def tool_json(space: Space, tool: str, arguments: dict[str, Any]) -> Any:
    return json.loads(space.ok("plugins", "call-tool", PLUGIN, tool, json.dumps(arguments)).stdout)


# -- metadata -----------------------------------------------------------------------------------

def test_every_extension_is_active_with_the_metadata_it_declares(space: Space, monkeypatch: pytest.MonkeyPatch) -> None:
    info = space.ok("plugins", "info", PLUGIN).stdout
    assert "  status:        active" in info, info
    states = {line.split()[1]: line.split()[0] for line in info.splitlines() if f"plugin:{PLUGIN}:" in line}
    expected = {f"plugin:{PLUGIN}:{kind}:{stem}" for kind, stem in EXTENSIONS}
    expected |= {f"plugin:{PLUGIN}:skill:release-checklist", f"plugin:{PLUGIN}:settings:config"}
    assert states == dict.fromkeys(expected, "active"), info

    tools = {t["id"]: t for t in json.loads(space.ok("tools", "list", "--json").stdout) if t.get("plugin") == PLUGIN}
    read = tools[f"plugin:{PLUGIN}:tool:read-project-file"]
    assert (read["name"], read["description"], read["strict"]) == (
        "read_project_file", "Read a UTF-8 file from the LLM Space workspace.", True)
    assert read["parameters"] == READ_PROJECT_FILE_PARAMETERS
    count = tools[f"plugin:{PLUGIN}:tool:word-count"]
    assert (count["name"], count["strict"]) == ("word_count", False)  # strict left out: false

    storages = json.loads(space.ok("storage", "list", "--json").stdout)
    assert storages == [{"id": f"plugin:{PLUGIN}:thread-storage:team-library", "displayName": "Example Team Library",
                         "description": "Read and write Threads in an example service.",
                         "deepLinkId": "team-library", "read": True, "write": True, "list": False}]

    # command display names and descriptions, as the palette gets them (from the metadata
    # cache the CLI wrote; the same PATH, so the same runtime and cache key)
    monkeypatch.setenv("PATH", space.path)
    app = App(DataRoot(space.home))
    try:
        app.plugin_code.ensure_loaded(PLUGIN)
        commands = {c.ref.id: (c.display_name, c.description) for c in app.plugin_code.commands()}
        assert app.plugin_code.hosts() == []  # listing came from the metadata cache: no host started
    finally:
        app.close()
    assert commands == COMMANDS


def test_the_plugin_skill_still_works(space: Space) -> None:
    listing = space.ok("skills", "list").stdout
    line = next(line for line in listing.splitlines() if line.startswith("release-checklist "))
    assert line.split()[1] == "yes", listing


# -- commands -----------------------------------------------------------------------------------

def test_hello_greets_the_audience_of_the_settings(space: Space) -> None:
    assert result_line(space.ok("plugins", "run-command", PLUGIN, "hello").stdout) == "success: Hello, LLM Space!"
    space.ok("plugins", "settings", PLUGIN, "audience=Team")
    # the display name works as well as the file-stem alias
    assert result_line(space.ok("plugins", "run-command", PLUGIN, "Say hello").stdout) == "success: Hello, Team!"


def test_palette_arguments_reach_the_command_and_context_arguments(space: Space) -> None:
    for line in ('echo-args production "Release 4.9" --dry-run', "Echo arguments production 'Release 4.9' --dry-run"):
        proc = space.ok("plugins", "run-command", PLUGIN, line)
        level, _, message = result_line(proc.stdout).partition(": ")
        assert level == "success" and json.loads(message) == ["production", "Release 4.9", "--dry-run"], proc.stdout
        report = next(x for x in proc.stderr.splitlines() if x.startswith("[arguments] "))
        assert json.loads(report[len("[arguments] "):]) == ["production", "Release 4.9", "--dry-run"]


def test_open_link_reaches_the_frontend(space: Space) -> None:
    proc = space.ok("plugins", "run-command", PLUGIN, "open-documentation")
    assert result_line(proc.stdout) == "success: Documentation opened."
    assert f"[{PLUGIN}] open: https://example.com/docs" in proc.stderr.splitlines()


def test_sync_active_thread_reports_progress_and_renames_the_thread(space: Space, library: LibraryService) -> None:
    library.titles["draft notes.json"] = "Release 4.9 notes"
    space.write_thread("draft notes.json")
    mark = library.mark()
    proc = space.ok("plugins", "run-command", PLUGIN, "sync-active-thread staging", "--thread", "draft notes.json")
    assert result_line(proc.stdout) == "success: Updated draft notes.json."
    progress = [line for line in proc.stderr.splitlines() if line.startswith("[")]
    assert progress == ["[fetching] Fetching staging metadata…", "[updating] Updating the Thread…"], proc.stderr
    assert [(r.method, r.path) for r in library.since(mark)] == [("GET", "/threads/draft%20notes.json")]
    assert not (space.workspace / "draft notes.json").exists()
    synced = space.read_thread("Release 4.9 notes.json")
    assert synced["title"] == "Release 4.9 notes"
    assert synced["context"]["messages"][0]["content"][0]["text"] == "Hello there."


def test_a_thrown_error_in_a_command_is_an_error_with_its_message_and_the_thread_is_kept(space: Space) -> None:
    space.write_thread("unknown to the server.json")
    before = (space.workspace / "unknown to the server.json").read_bytes()
    proc = space.run("plugins", "run-command", PLUGIN, "sync-active-thread", "--thread", "unknown to the server.json")
    assert (proc.returncode, proc.stdout) == (1, "error: Sync active thread failed: Metadata request failed (404).\n")
    assert proc.stderr == "[fetching] Fetching production metadata…\n"  # the default environment
    assert (space.workspace / "unknown to the server.json").read_bytes() == before


def test_without_a_thread_the_command_sees_no_active_tab(space: Space) -> None:
    proc = space.ok("plugins", "run-command", PLUGIN, "sync-active-thread")
    assert proc.stdout == "warning: Open a Thread before running this command.\n"


# -- tools ----------------------------------------------------------------------------------------

PLAN = "# Plan\n\nShip the conformance suite to every host.\n"


def test_read_project_file_reads_a_workspace_file_and_truncates(space: Space) -> None:
    (space.workspace / "docs").mkdir(exist_ok=True)
    (space.workspace / "docs" / "plan.md").write_text(PLAN, encoding="utf-8")
    assert tool_json(space, "read_project_file", {"path": "docs/plan.md"}) == {
        "path": "docs/plan.md", "content": PLAN, "truncated": False}
    # by the file stem too
    assert tool_json(space, "read-project-file", {"path": "docs/plan.md", "maxChars": 6}) == {
        "path": "docs/plan.md", "content": PLAN[:6], "truncated": True}


def test_a_thrown_error_in_a_tool_is_an_error_result_with_its_message(space: Space) -> None:
    proc = space.run("plugins", "call-tool", PLUGIN, "read_project_file", '{"path": ""}')
    assert (proc.returncode, proc.stdout) == (1, "path is required.\n"), proc.stderr  # the message, no stack
    # refused callbacks throw in the plugin; uncaught, their message is the tool's error
    proc = space.run("plugins", "call-tool", PLUGIN, "read_project_file", '{"path": "missing.md"}')
    assert (proc.returncode, proc.stdout) == (1, "missing.md does not exist.\n"), proc.stderr
    proc = space.run("plugins", "call-tool", PLUGIN, "read_project_file", '{"path": "../outside.md"}')
    assert proc.returncode == 1 and "'../outside.md' leaves the workspace" in proc.stdout, proc.stdout + proc.stderr


def expected_runtime(runtime: Runtime) -> str:
    return f"{'node' if runtime.name.startswith('node') else runtime.name} {runtime.version}"


def test_the_mjs_tool_runs_in_the_runtime_under_test(space: Space, runtime: Runtime) -> None:
    (space.workspace / "words.txt").write_text("one two  three\nfour\n", encoding="utf-8")
    assert tool_json(space, "word_count", {"path": "words.txt"}) == {
        "path": "words.txt", "words": 4, "runtime": expected_runtime(runtime)}


# -- thread storage ---------------------------------------------------------------------------------

def imported_text(path: Path) -> str:
    data = json.loads(path.read_text(encoding="utf-8"))
    return str(data["context"]["messages"][0]["content"][0]["text"])


def test_storage_import_resolves_then_reads_with_the_resource_id_encoded(space: Space, library: LibraryService) -> None:
    mark = library.mark()
    out = space.ok("storage", "import", "team-library", ALPHA_ID).stdout
    assert out.startswith("Imported imported/alpha"), out
    rel = out.split(" ", 1)[1].strip()
    assert imported_text(space.workspace / rel) == ALPHA_TEXT
    assert [(r.method, r.path) for r in library.since(mark)] == [("GET", ALPHA_PATH), ("GET", ALPHA_PATH + "/content")]


def test_a_deep_link_imports_into_workspace_imported(space: Space, library: LibraryService) -> None:
    mark = library.mark()
    path = Path(space.ok("open-url", ALPHA_LINK).stdout.strip())
    assert path.parent == space.workspace / "imported" and path.name.startswith("alpha")
    assert imported_text(path) == ALPHA_TEXT
    # everything after team-library/ reached the storage as the resource ID, unchanged
    assert [(r.method, r.path) for r in library.since(mark)] == [("GET", ALPHA_PATH), ("GET", ALPHA_PATH + "/content")]


def test_storage_save_puts_with_an_id_and_posts_without(space: Space, library: LibraryService) -> None:
    space.write_thread("to save.json", "Saved text.")
    mark = library.mark()
    out = space.ok("storage", "save", "team-library", "to save.json", "--id", "project/beta").stdout
    assert out.startswith("Saved to save.json to Example Team Library: ") and '"id": "project/beta"' in out, out
    out = space.ok("storage", "save", f"plugin:{PLUGIN}:thread-storage:team-library", "to save.json").stdout
    assert '"id": "posted-' in out, out
    seen = library.since(mark)
    assert [(r.method, r.path) for r in seen] == [("PUT", "/threads/project%2Fbeta"), ("POST", "/threads")]
    assert all(r.body["title"] == "to save" and imported_text_of(r.body) == "Saved text." for r in seen), seen


def imported_text_of(thread: dict[str, Any]) -> str:
    return str(thread["context"]["messages"][0]["content"][0]["text"])


def test_a_thrown_error_in_a_storage_fails_the_import_with_its_message(space: Space) -> None:
    proc = space.run("storage", "import", "team-library", "project/missing")
    assert (proc.returncode, proc.stderr) == (1, "error: Example Team Library: Request failed (404).\n"), proc.stdout
    assert not list((space.workspace / "imported").glob("missing*"))

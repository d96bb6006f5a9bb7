"""Acceptance of Python plugin code: the Atlas example zipped and installed with the CLI,
every extension active, its tool called through a model (a loopback Chat Completions
server that asks for it), its command run with progress on a thread, a deep link imported;
and a host killed mid-call gives a clean error while the next call works."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path

from llmspace.app import App
from llmspace.core.model import ThreadContext, ToolCallOutput
from llmspace.core.threadio import parse_thread, serialize_thread, thread_from_data
from llmspace.plugins.code.calls import plugin_tool_entry_for
from tests.support.cli import cli_in_process
from tests.support.llm_server import LoopbackLLM, ToolCallSpec, Turn, configure_provider

from ..code_plugins import HANGING_TOOL, TEXT_TOOL, code_plugin
from ..code_plugins import call_tool as _call

ROOT = Path(__file__).resolve().parents[3]
ATLAS = ROOT / "examples" / "plugins" / "atlas"


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`llmspace ARGS` on `home`, in this process (what a command does is the point here, not its process)."""
    return cli_in_process(list(args), env={"LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}, cwd=ROOT)


def _ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_the_atlas_example_installs_runs_its_tool_through_a_model_its_command_and_a_deep_link(
        home: Path, tmp_path: Path) -> None:
    zip_path = tmp_path / "atlas.zip"
    _ok(_cli(home, "plugins", "pack", str(ATLAS), "-o", str(zip_path)))
    assert "Status: active" in _ok(_cli(home, "plugins", "install", "--yes", str(zip_path)))
    info = _ok(_cli(home, "plugins", "info", "atlas"))
    lines = [line.strip() for line in info.splitlines() if "plugin:atlas:" in line]
    assert len(lines) == 10 and all(line.startswith("active") for line in lines), info
    assert "plugin:atlas:tool:city-facts" in _ok(_cli(home, "tools", "list"))

    thread = home / "workspace" / "trip.json"
    thread.write_bytes(serialize_thread(thread_from_data({"title": "trip", "context": {"messages": [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "Tell me about Lisbon."}]}]}})))
    _ok(_cli(home, "tools", "add", "trip.json", "plugin:atlas:tool:city-facts"))
    with LoopbackLLM() as srv:
        configure_provider(home, srv)
        srv.push(Turn(tool_calls=[ToolCallSpec(id="call_1", name="city_facts", arguments={"city": "Lisbon"})]),
                 Turn(text="Lisbon is the capital of Portugal."))
        _ok(_cli(home, "run", "trip.json", "--react"))
        second = srv.requests[-1].body_json
    tool_messages = [m for m in second["messages"] if m.get("role") == "tool"]
    assert tool_messages and "Portugal" in tool_messages[0]["content"]
    saved = parse_thread(thread.read_bytes())
    call = saved.messages[1].toolCalls[0]
    assert call.output is not None and call.output.isError is False and '"country": "Portugal"' in call.output.text()
    assert saved.context is not None and saved.context.tools[0].type == "plugin"

    proc = _cli(home, "plugins", "run-command", "atlas", "stamp-title Draft", "--thread", "trip.json")
    _ok(proc)
    assert "success:" in proc.stdout and proc.stderr.count("[") >= 2  # progress reports on stderr
    stamped = home / "workspace" / "[Draft] trip.json"
    assert stamped.exists() and not thread.exists()

    saved_to = _ok(_cli(home, "storage", "save", "atlas", "[Draft] trip.json", "--id", "project/alpha"))
    assert "project/alpha" in saved_to
    imported = Path(_ok(_cli(home, "open-url", "llm-space://threads/atlas/project/alpha?revision=latest")).strip())
    assert imported.parent == home / "workspace" / "imported" and imported.exists()
    assert parse_thread(imported.read_bytes()).messages[0].text() == "Tell me about Lisbon."


def test_killing_the_host_mid_call_gives_a_clean_error_and_the_next_call_works(app: App, home: Path) -> None:
    code_plugin(home, tools={"hanging": HANGING_TOOL, "plain": TEXT_TOOL})
    app.plugin_code.ensure_loaded()
    specs = {s.ref.id: s for s in app.plugin_code.tool_specs()}
    thread = thread_from_data({"title": "t"})
    thread.context = ThreadContext(tools=[plugin_tool_entry_for(specs["hanging"]), plugin_tool_entry_for(specs["plain"])])
    box: dict[str, ToolCallOutput] = {}
    worker = threading.Thread(target=lambda: box.setdefault("out", _call(app, thread, "hanging", {"polite": True})))
    worker.start()
    host = app.plugin_code.hosts()[0]
    for _ in range(600):
        if host.busy and host.running:
            break
        threading.Event().wait(0.05)
    assert host.busy
    conn = host._conn
    assert conn is not None and conn.pid is not None
    os.kill(conn.pid, signal.SIGKILL)
    worker.join(30)
    out = box["out"]
    assert out.isError is True
    assert "stopped unexpectedly" in out.text() and "SIGKILL" in out.text()
    assert _call(app, thread, "plain_text", {}).text() == "just text"
    assert json.loads(json.dumps(out.text()))  # a plain message, no traceback
    assert "Traceback" not in out.text()

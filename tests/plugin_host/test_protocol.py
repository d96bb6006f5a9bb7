"""Both plugin hosts implement exactly the protocol of llmspace/plugin_protocol.py: the
JavaScript host's table (llmspace/plugin_host/js/protocol.mjs) equals the module's, the
contexts each host hands plugin code send exactly the module's callbacks per kind, and the
files that speak the protocol spell no method name or error code of their own."""

from __future__ import annotations

import io
import json
import re
import subprocess
import tokenize
from pathlib import Path
from typing import Any

import pytest

from llmspace import plugin_protocol as protocol
from llmspace.plugin_host.context import CommandCallContext, StorageCallContext, ToolCallContext, caller
from llmspace.plugin_host.signals import CallSignal

from .client import REPO, HostClient
from .js.client import JsHostClient
from .js.conftest import require

JS = REPO / "llmspace" / "plugin_host" / "js"
NAMES = set(protocol.HOST_METHODS) | set(protocol.CALLBACKS)
PYTHON_FILES = ["llmspace/plugins/hosts/callbacks.py", "llmspace/plugins/hosts/host.py", "llmspace/plugins/hosts/connection.py",
                "llmspace/plugin_host/context.py", "llmspace/plugin_host/calls.py", "llmspace/plugin_host/server.py",
                "llmspace/plugin_host/rpc.py"]
JS_FILES = ["context.mjs", "calls.mjs", "host.mjs", "rpc.mjs"]

# What the script prints: the table of protocol.mjs, and per kind the methods a context sent
# when each of its callback members (and `activeTab.writeThread`) was called once.
JS_PROBE = """
const protocol = await import(process.argv[1] + "/protocol.mjs");
const { makeContext } = await import(process.argv[1] + "/context.mjs");
const ARGS = {
  notify: ["hello"], openLink: ["https://example.com/"], pickFile: [], readWorkspaceFile: ["a.txt"],
  writeWorkspaceFile: ["a.txt", "text"], executeHostCommand: ["openSettings"], report: ["phase"],
  writeThread: [{}],
};
const sent = {};
const unknown = [];
for (const kind of protocol.KINDS) {
  sent[kind] = [];
  const conn = { request: async (method) => { sent[kind].push(method); return method === "readWorkspaceFile" ? "" : null; } };
  const ctx = makeContext(kind, conn, "c1", new AbortController().signal, { activeTab: { filename: "t", thread: {} } });
  const members = Object.entries(ctx).filter(([name, value]) => typeof value === "function" && name !== "createResult");
  if (ctx.activeTab) members.push(["writeThread", ctx.activeTab.writeThread]);
  for (const [name, fn] of members) {
    if (!(name in ARGS)) { unknown.push(`${kind}: ${name}`); continue; }
    await fn(...ARGS[name]);
  }
}
process.stderr.write(JSON.stringify({ table: { ...protocol }, sent, unknown }));
"""


@pytest.fixture(scope="module", params=["bun", "node"])
def js_probe(request: pytest.FixtureRequest) -> dict[str, Any]:
    """What the JavaScript host holds, under Bun and under Node."""
    runtime = require(request.param)
    # The host's modules send nothing to stdout; the probe answers on stderr like host logs.
    args = [runtime.executable, "--input-type=module", "-e", JS_PROBE, JS.as_uri()] if runtime.name == "node" \
        else [runtime.executable, "-e", JS_PROBE, JS.as_uri()]
    out = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=JS, check=False)
    assert out.returncode == 0, out.stderr
    data: dict[str, Any] = json.loads(out.stderr)
    return data


def test_the_javascript_host_holds_the_protocol_table_of_the_python_module(js_probe: dict[str, Any]) -> None:
    table = js_probe["table"]
    python = {name: json.loads(json.dumps(getattr(protocol, name, None))) for name in table}
    assert table == python, "protocol.mjs and llmspace/plugin_protocol.py differ"
    method_constants = {name for name in dir(protocol) if isinstance(getattr(protocol, name), str) and getattr(protocol, name) in NAMES}
    missing = (set(protocol.table()) | method_constants) - set(table)
    assert missing == set(), "protocol.mjs lacks names of the Python module"


@pytest.mark.parametrize("kind", protocol.KINDS)
def test_the_javascript_contexts_send_exactly_the_protocol_callbacks_of_each_kind(
        js_probe: dict[str, Any], kind: str) -> None:
    assert js_probe["unknown"] == [], "a context member the protocol does not name"
    assert sorted(js_probe["sent"][kind]) == sorted(protocol.CALLBACKS_OF[kind])


class _Recorder:
    """Stands in for the host's connection: records each callback's method."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.sent.append(method)
        return "" if method == protocol.READ_WORKSPACE_FILE else None


PY_ARGS: dict[str, tuple[Any, ...]] = {
    "notify": ("hello",), "open_link": ("https://example.com/",), "pick_file": (), "read_workspace_file": ("a.txt",),
    "write_workspace_file": ("a.txt", "text"), "execute_host_command": ("openSettings",), "report": ("phase",),
    "write_thread": ({},),
}


@pytest.mark.parametrize("kind", protocol.KINDS)
def test_the_python_contexts_send_exactly_the_protocol_callbacks_of_each_kind(kind: str) -> None:
    conn = _Recorder()
    call = caller(conn, "c1")  # type: ignore[arg-type]
    context = {"activeTab": {"filename": "t", "thread": {}}}
    ctx: Any = (ToolCallContext(call, CallSignal(), context) if kind == protocol.TOOL
                else CommandCallContext(call, CallSignal(), context, ()) if kind == protocol.COMMAND
                else StorageCallContext(call, CallSignal(), context))
    members = {name: getattr(ctx, name) for name in dir(ctx)  # snake_case only: the camelCase ones are aliases
               if not name.startswith("_") and name == name.lower() and name != "create_result"}
    members = {name: member for name, member in members.items() if callable(member)}
    if getattr(ctx, "active_tab", None) is not None:
        members["write_thread"] = ctx.active_tab.write_thread
    assert sorted(set(members) - set(PY_ARGS)) == [], "a context member the protocol does not name"
    for name, method in members.items():
        method(*PY_ARGS[name])
    assert sorted(conn.sent) == sorted(protocol.CALLBACKS_OF[kind])


@pytest.mark.parametrize("runtime", ["python", "bun", "node"])
def test_each_host_answers_every_app_method_of_the_protocol_and_no_other(runtime: str, tmp_path: Path) -> None:
    client = HostClient(tmp_path) if runtime == "python" else JsHostClient(require(runtime), tmp_path)
    try:
        codes = {method: client.call(method, {}).get("error", {}).get("code")
                 for method in (*protocol.HOST_METHODS, "noSuchMethod") if method != protocol.SHUTDOWN}
        codes[protocol.SHUTDOWN] = client.call(protocol.SHUTDOWN, {}).get("error", {}).get("code")
    finally:
        client.close()
    assert [m for m, code in codes.items() if code == protocol.METHOD_NOT_FOUND] == ["noSuchMethod"], codes


def _literals_py(source: str) -> list[str]:
    """Protocol method names as string literals and error codes as numbers in Python code."""
    found = []
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.STRING and tok.string.strip("'\"") in NAMES and tok.string[0] in "'\"" \
                and len(tok.string) == len(tok.string.strip("'\"")) + 2:
            found.append(f"{tok.start[0]}: {tok.string}")
        if tok.type == tokenize.NUMBER and re.fullmatch(r"32\d{3}", tok.string) and tokens[i - 1].string == "-":
            found.append(f"{tok.start[0]}: -{tok.string}")
    return found


def _literals_js(source: str) -> list[str]:
    found = []
    for n, line in enumerate(source.splitlines(), 1):
        code = line.split("//", 1)[0] if not line.lstrip().startswith(("//", "*", "/*")) else ""
        for match in re.finditer(r"\"([A-Za-z]+)\"|-32\d{3}", code):
            if match[0].startswith("-") or match[1] in NAMES:
                found.append(f"{n}: {match[0]}")
    return found


def test_the_files_that_speak_the_protocol_take_its_names_and_codes_from_the_protocol_module() -> None:
    spelled = {f: _literals_py((REPO / f).read_text(encoding="utf-8")) for f in PYTHON_FILES}
    spelled |= {f"js/{f}": _literals_js((JS / f).read_text(encoding="utf-8")) for f in JS_FILES}
    assert {f: found for f, found in spelled.items() if found} == {}

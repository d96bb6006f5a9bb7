"""Callbacks: every context method sends its request with the call's callId, resolves with
the app's answer, and rejects with an Error carrying the app's message when it refuses."""

from __future__ import annotations

import pytest

from ..plugin_host.client import Refuse

EVERY_CALLBACK = """
    export default class Everything {
      displayName = "Everything";

      async execute(context, args) {
        const { notify, readWorkspaceFile } = context;  // methods work detached too
        const thread = structuredClone(context.activeTab.thread);
        thread.title = "Renamed";
        return {
          notify: await notify("Hello", "warning"),
          notifyDefault: await context.notify("Plain"),
          openLink: await context.openLink("https://example.com/docs"),
          pickFile: await context.pickFile({ title: "Pick", filters: [{ name: "Text", extensions: ["txt"] }] }),
          pickNothing: await context.pickFile(),
          readWorkspaceFile: await readWorkspaceFile("docs/plan.md"),
          writeWorkspaceFile: await context.writeWorkspaceFile("out/a.md", "# A\\n"),
          executeHostCommand: await context.executeHostCommand("refreshTree"),
          executeHostCommandArgs: await context.executeHostCommand("openSettings", { tab: "plugins" }),
          report: await context.report({ phase: "loading", message: "Loading records…" }),
          reportPhase: await context.report({ phase: "uploading" }),
          writeThread: await context.activeTab.writeThread(thread),
        };
      }
    }
"""

ANSWERS = {"pickFile": "/abs/picked.txt", "readWorkspaceFile": "file text ✓"}


def answer(method, params):
    if method == "pickFile" and not params["options"]:
        return None
    return ANSWERS.get(method)


def test_every_callback_round_trips_with_the_call_id_and_resolves_with_the_apps_answer(start_plugin):
    client, _ = start_plugin({"commands/everything": EVERY_CALLBACK}, answer)
    context = {"settings": {}, "activeTab": {"filename": "t.thread.json", "thread": {"title": "Old", "messages": []}}}
    assert client.value("command", "everything", {"arguments": []}, context, call_id="c42") == {
        "notify": None, "notifyDefault": None, "openLink": None, "pickFile": "/abs/picked.txt", "pickNothing": None,
        "readWorkspaceFile": "file text ✓", "writeWorkspaceFile": None, "executeHostCommand": None,
        "executeHostCommandArgs": None, "report": None, "reportPhase": None, "writeThread": None,
    }
    assert client.callbacks == [
        ("notify", {"message": "Hello", "level": "warning", "callId": "c42"}),
        ("notify", {"message": "Plain", "level": "info", "callId": "c42"}),
        ("openLink", {"url": "https://example.com/docs", "callId": "c42"}),
        ("pickFile", {"options": {"title": "Pick", "filters": [{"name": "Text", "extensions": ["txt"]}]}, "callId": "c42"}),
        ("pickFile", {"options": {}, "callId": "c42"}),
        ("readWorkspaceFile", {"path": "docs/plan.md", "callId": "c42"}),
        ("writeWorkspaceFile", {"path": "out/a.md", "content": "# A\n", "callId": "c42"}),
        ("executeHostCommand", {"type": "refreshTree", "callId": "c42"}),
        ("executeHostCommand", {"type": "openSettings", "args": {"tab": "plugins"}, "callId": "c42"}),
        ("report", {"phase": "loading", "message": "Loading records…", "callId": "c42"}),
        ("report", {"phase": "uploading", "callId": "c42"}),
        ("writeThread", {"thread": {"title": "Renamed", "messages": []}, "callId": "c42"}),
    ]


def test_tool_and_storage_contexts_have_the_common_callbacks_and_not_the_command_ones(start_plugin):
    tool = """
        export default class Probe {
          name = "probe"; description = ""; parameters = { type: "object" };
          async execute(context) {
            await context.notify("from a tool");
            return ["report", "activeTab", "arguments", "writeThread"].filter((k) => k in context);
          }
        }
    """
    storage = """
        export default class Store {
          displayName = "Store"; capabilities = { read: true };
          async resolveLatest(id, context) {
            return { id: await context.readWorkspaceFile(id), keys: Object.keys(context).sort() };
          }
          async read() { return {}; }
        }
    """
    client, _ = start_plugin({"tools/probe": tool, "thread-storages/store": storage}, lambda m, p: p.get("path", "").upper())
    assert client.value("tool", "probe", {"arguments": {}}) == []
    latest = client.value("thread-storage", "store", {"id": "a.txt"}, method="resolveLatest")
    assert latest == {"id": "A.TXT", "keys": sorted(["settings", "signal", "notify", "openLink", "pickFile", "readWorkspaceFile",
                                                     "writeWorkspaceFile", "executeHostCommand"])}


def test_a_refused_callback_rejects_with_an_error_carrying_the_apps_message(start_plugin):
    source = """
        export default class Reads {
          name = "reads"; description = ""; parameters = { type: "object" };
          async execute(context, args) {
            try {
              await context.readWorkspaceFile("../outside.txt");
            } catch (error) {
              return { isError: error instanceof Error, name: error.name, message: error.message, code: error.code };
            }
            return "not refused";
          }
        }
    """

    def refuse(method, params):
        raise Refuse("The path escapes the workspace: ../outside.txt")

    client, _ = start_plugin({"tools/reads": source}, refuse)
    assert client.tool("reads")["value"] == {"isError": True, "name": "PluginCallError",
                                             "message": "The path escapes the workspace: ../outside.txt", "code": -32010}


def test_an_uncaught_refusal_fails_the_call_with_the_apps_message(start_plugin):
    source = """
        export default class Picks {
          displayName = "Picks";
          execute(context) { return context.pickFile(); }
        }
    """

    def refuse(method, params):
        raise Refuse("pickFile needs the desktop app")

    client, _ = start_plugin({"commands/picks": source}, refuse)
    error = client.execute("command", "picks", {"arguments": []})["error"]
    assert error["code"] == -32000
    assert error["message"] == "pickFile needs the desktop app"
    assert error["data"]["name"] == "PluginCallError"


def test_many_callbacks_of_one_call_in_parallel_are_each_answered(start_plugin):
    source = """
        export default class Many {
          name = "many"; description = ""; parameters = { type: "object" };
          execute(context) {
            return Promise.all(Array.from({ length: 40 }, (_, i) => context.readWorkspaceFile(`f${i}.txt`)));
          }
        }
    """
    client, _ = start_plugin({"tools/many": source}, lambda m, p: p["path"].upper())
    assert client.tool("many")["value"] == [f"F{i}.TXT" for i in range(40)]


@pytest.mark.parametrize(("call", "error"), [
    ("context.notify(42)", "TypeError"),
    ("context.notify('x', 'loud')", "RangeError"),
    ("context.openLink('')", "RangeError"),
    ("context.pickFile('*.txt')", "TypeError"),
    ("context.readWorkspaceFile()", "TypeError"),
    ("context.writeWorkspaceFile('a.txt', new Uint8Array(1))", "TypeError"),
    ("context.executeHostCommand('refreshTree', { when: new Date() })", "TypeError"),
    ("context.executeHostCommand('refreshTree', { f() {} })", "TypeError"),
])
def test_wrong_arguments_to_a_context_method_reject_before_anything_is_sent(start_plugin, call, error):
    source = f"""
        export default class Wrong {{
          name = "wrong"; description = ""; parameters = {{ type: "object" }};
          async execute(context) {{
            const pending = {call};
            if (!(pending instanceof Promise)) return "not a promise";
            try {{
              await pending;
            }} catch (error) {{
              return error.name;
            }}
            return "accepted";
          }}
        }}
    """
    client, _ = start_plugin({"tools/wrong": source})
    assert client.tool("wrong")["value"] == error
    assert client.callbacks == []


def test_command_only_methods_check_their_arguments(start_plugin):
    source = """
        export default class Checks {
          displayName = "Checks";
          async execute(context) {
            const names = [];
            for (const attempt of [
              () => context.report({ phase: "" }),
              () => context.report({ phase: "p", message: 3 }),
              () => context.activeTab.writeThread([]),
              () => context.activeTab.writeThread({ when: new Date() }),
            ]) {
              try {
                await attempt();
                names.push("accepted");
              } catch (error) {
                names.push(error.name);
              }
            }
            await context.report("legacy-phase", "a positional message");
            return names;
          }
        }
    """
    client, _ = start_plugin({"commands/checks": source})
    context = {"activeTab": {"filename": "a.json", "thread": {}}}
    assert client.value("command", "checks", {"arguments": []}, context) == ["RangeError", "TypeError", "TypeError", "TypeError"]
    assert client.callbacks == [("report", {"phase": "legacy-phase", "message": "a positional message", "callId": "c2"})]

"""Every host (Python; JavaScript under Bun and Node): every context method sends its
request with the call's callId and returns (JavaScript: resolves with) the app's answer; a
refusal is a PluginCallError with the app's message and code; tool and storage contexts have
the common callbacks only. Wrong arguments are refused before anything is sent (per language)."""

from __future__ import annotations

import pytest

from .client import Refuse
from .conftest import Code
from .js.conftest import USUAL, variant_id

JS_HOSTS = pytest.mark.parametrize("any_host", USUAL, ids=variant_id, indirect=True)

EVERY_CALLBACK = Code(py="""
    import copy

    class Everything:
        display_name = "Everything"

        def execute(self, context, arguments):
            thread = copy.deepcopy(context.active_tab.thread)
            thread["title"] = "Renamed"
            notify = context.notify  # methods work detached too
            return {
                "notify": notify("Hello", "warning"),
                "notifyDefault": context.notify("Plain"),
                "openLink": context.openLink("https://example.com/docs"),
                "pickFile": context.pickFile({"title": "Pick", "filters": [{"name": "Text", "extensions": ["txt"]}]}),
                "pickNothing": context.pick_file(),
                "readWorkspaceFile": context.read_workspace_file("docs/plan.md"),
                "writeWorkspaceFile": context.writeWorkspaceFile("out/a.md", "# A\\n"),
                "executeHostCommand": context.executeHostCommand("refreshTree"),
                "executeHostCommandArgs": context.execute_host_command("openSettings", {"tab": "plugins"}),
                "report": context.report({"phase": "loading", "message": "Loading records…"}),
                "reportPhase": context.report("uploading"),
                "writeThread": context.activeTab.writeThread(thread),
            }
""", js="""
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
""")

ANSWERS = {"pickFile": "/abs/picked.txt", "readWorkspaceFile": "file text ✓"}


def answer(method, params):
    if method == "pickFile" and not params["options"]:
        return None
    return ANSWERS.get(method)


def test_every_callback_round_trips_with_the_call_id_and_returns_the_apps_answer(start_any_plugin):
    client, _ = start_any_plugin({"commands/everything": EVERY_CALLBACK}, answer)
    context = {"settings": {}, "activeTab": {"filename": "t.thread.json", "thread": {"title": "Old", "messages": []}}}
    result = client.execute("command", "everything", {"arguments": []}, context, call_id="c42")["result"]
    assert result == {"type": "value", "value": {
        "notify": None, "notifyDefault": None, "openLink": None, "pickFile": "/abs/picked.txt", "pickNothing": None,
        "readWorkspaceFile": "file text ✓", "writeWorkspaceFile": None, "executeHostCommand": None,
        "executeHostCommandArgs": None, "report": None, "reportPhase": None, "writeThread": None,
    }}
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


TOOL_PROBE = Code(py="""
    class Probe:
        name = "probe"
        description = ""
        parameters = {"type": "object"}

        def execute(self, context, args):
            context.notify("from a tool")
            return [k for k in ("report", "activeTab", "arguments", "writeThread") if hasattr(context, k)]
""", js="""
        export default class Probe {
          name = "probe"; description = ""; parameters = { type: "object" };
          async execute(context) {
            await context.notify("from a tool");
            return ["report", "activeTab", "arguments", "writeThread"].filter((k) => k in context);
          }
        }
    """)
STORAGE_PROBE = Code(py="""
    class Store:
        display_name = "Store"
        capabilities = {"read": True}

        def resolve_latest(self, id, context):
            keys = [k for k in dir(context) if not k.startswith("_") and k == k.lower()]
            return {"id": context.read_workspace_file(id), "keys": sorted(keys)}

        def read(self, locator, context):
            return {}
""", js="""
        export default class Store {
          displayName = "Store"; capabilities = { read: true };
          async resolveLatest(id, context) {
            return { id: await context.readWorkspaceFile(id), keys: Object.keys(context).sort() };
          }
          async read() { return {}; }
        }
    """)
STORAGE_KEYS = {
    "py": sorted(["settings", "signal", "notify", "open_link", "pick_file", "read_workspace_file", "write_workspace_file",
                  "execute_host_command"]),
    "js": sorted(["settings", "signal", "notify", "openLink", "pickFile", "readWorkspaceFile", "writeWorkspaceFile",
                  "executeHostCommand"]),
}


def test_tool_and_storage_contexts_have_the_common_callbacks_and_not_the_command_ones(start_any_plugin, any_host):
    client, _ = start_any_plugin({"tools/probe": TOOL_PROBE, "thread-storages/store": STORAGE_PROBE},
                                 lambda m, p: p.get("path", "").upper())
    assert client.tool("probe")["value"] == []
    latest = client.execute("thread-storage", "store", {"id": "a.txt"}, method="resolveLatest")["result"]["value"]
    assert latest == {"id": "A.TXT", "keys": STORAGE_KEYS["js" if any_host.is_js else "py"]}


REFUSED = Code(py="""
    from llmspace.plugin_api import PluginCallError

    class Reads:
        name = "reads"
        description = ""
        parameters = {"type": "object"}

        def execute(self, context, args):
            try:
                context.read_workspace_file("../outside.txt")
            except PluginCallError as exc:
                return {"isError": isinstance(exc, Exception), "name": type(exc).__name__, "message": str(exc),
                        "code": exc.code}
            return "not refused"
""", js="""
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
    """)


def test_a_refused_callback_raises_plugin_call_error_with_the_apps_message_and_code(start_any_plugin):
    def refuse(method, params):
        raise Refuse("The path escapes the workspace: ../outside.txt")

    client, _ = start_any_plugin({"tools/reads": REFUSED}, refuse)
    assert client.tool("reads")["value"] == {"isError": True, "name": "PluginCallError",
                                             "message": "The path escapes the workspace: ../outside.txt", "code": -32010}


UNCAUGHT = Code(py="""
        class Picks:
            display_name = "Picks"

            def execute(self, context):
                return context.pick_file()
    """, js="""
        export default class Picks {
          displayName = "Picks";
          execute(context) { return context.pickFile(); }
        }
    """)


def test_an_uncaught_refusal_fails_the_call_with_the_apps_message(start_any_plugin):
    def refuse(method, params):
        raise Refuse("pickFile needs the desktop app")

    client, _ = start_any_plugin({"commands/picks": UNCAUGHT}, refuse)
    error = client.execute("command", "picks", {"arguments": []})["error"]
    assert error["code"] == -32000
    assert error["message"] == "pickFile needs the desktop app"
    assert error["data"]["name"] == "PluginCallError"


MANY = Code(py="""
        from concurrent.futures import ThreadPoolExecutor

        class Many:
            name = "many"
            description = ""
            parameters = {"type": "object"}

            def execute(self, context, args):
                with ThreadPoolExecutor(8) as pool:
                    return list(pool.map(lambda i: context.read_workspace_file(f"f{i}.txt"), range(40)))
    """, js="""
        export default class Many {
          name = "many"; description = ""; parameters = { type: "object" };
          execute(context) {
            return Promise.all(Array.from({ length: 40 }, (_, i) => context.readWorkspaceFile(`f${i}.txt`)));
          }
        }
    """)


def test_many_callbacks_of_one_call_at_once_are_each_answered(start_any_plugin):
    client, _ = start_any_plugin({"tools/many": MANY}, lambda m, p: p["path"].upper())
    assert client.tool("many")["value"] == [f"F{i}.TXT" for i in range(40)]


# -- per language: argument checks and the command forms of each -------------------------------

@pytest.mark.parametrize(("call", "error"), [
    ("context.notify(42)", "TypeError"),
    ("context.notify('x', level='loud')", "ValueError"),
    ("context.open_link('')", "ValueError"),
    ("context.write_workspace_file('a.txt', b'bytes')", "TypeError"),
    ("context.execute_host_command('refreshTree', {1, 2})", "TypeError"),
])
def test_wrong_arguments_to_a_python_context_method_raise_before_anything_is_sent(start_plugin, call, error):
    source = f"""
        class Wrong:
            name = "wrong"
            description = ""
            parameters = {{"type": "object"}}

            def execute(self, context, args):
                try:
                    {call}
                except Exception as exc:
                    return type(exc).__name__
    """
    client, _ = start_plugin({"tools/wrong.py": source})
    assert client.tool("wrong")["value"] == error
    assert client.callbacks == []


def test_commands_get_the_arguments_as_a_second_parameter_only_when_they_take_one(start_plugin):
    takes_two = 'class A:\n    display_name = "A"\n    def execute(self, context, args):\n        return [list(args), list(context.arguments)]\n'
    takes_one = 'class B:\n    display_name = "B"\n    def execute(self, context):\n        return list(context.arguments)\n'
    takes_star = 'class C:\n    display_name = "C"\n    def execute(self, *rest):\n        return len(rest)\n'
    client, _ = start_plugin({"commands/a.py": takes_two, "commands/b.py": takes_one, "commands/c.py": takes_star})
    words = ["production", "Release 4.9", "--dry-run"]
    assert client.execute("command", "a", {"arguments": words})["result"]["value"] == [words, words]
    assert client.execute("command", "b", {"arguments": words})["result"]["value"] == words
    assert client.execute("command", "c", {"arguments": words})["result"]["value"] == 2


def test_a_command_outcome_from_create_result_and_its_checks(start_plugin):
    source = """
        class Outcome:
            display_name = "Outcome"

            def execute(self, context, arguments):
                errors = []
                for bad in ({"level": "fine", "message": "x"}, {"level": "success"}):
                    try:
                        context.create_result(bad)
                    except (TypeError, ValueError) as exc:
                        errors.append(type(exc).__name__)
                context.report("checked", ", ".join(errors))
                if context.active_tab is None:
                    return context.createResult({"level": "warning", "message": "Open a Thread first."})
                return context.create_result(level="success", message="Synced 6 records.")
    """
    client, _ = start_plugin({"commands/outcome.py": source})
    no_tab = client.execute("command", "outcome", {"arguments": []}, {"settings": {}, "activeTab": None})
    assert no_tab["result"] == {"type": "result", "result": {"level": "warning", "message": "Open a Thread first."}}
    tab = {"activeTab": {"filename": "a.json", "thread": {}}}
    assert client.execute("command", "outcome", {"arguments": []}, tab)["result"]["result"] == {
        "level": "success", "message": "Synced 6 records."}
    assert client.callbacks[0][1]["message"] == "ValueError, TypeError"


JS_WRONG = [
    ("context.notify(42)", "TypeError"),
    ("context.notify('x', 'loud')", "RangeError"),
    ("context.openLink('')", "RangeError"),
    ("context.pickFile('*.txt')", "TypeError"),
    ("context.readWorkspaceFile()", "TypeError"),
    ("context.writeWorkspaceFile('a.txt', new Uint8Array(1))", "TypeError"),
    ("context.executeHostCommand('refreshTree', { when: new Date() })", "TypeError"),
    ("context.executeHostCommand('refreshTree', { f() {} })", "TypeError"),
]


@JS_HOSTS
@pytest.mark.parametrize(("call", "error"), JS_WRONG)
def test_wrong_arguments_to_a_javascript_context_method_reject_before_anything_is_sent(start_any_plugin, call, error):
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
    client, _ = start_any_plugin({"tools/wrong": source})
    assert client.tool("wrong")["value"] == error
    assert client.callbacks == []


@JS_HOSTS
def test_command_only_methods_of_the_javascript_context_check_their_arguments(start_any_plugin):
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
    client, _ = start_any_plugin({"commands/checks": source})
    context = {"activeTab": {"filename": "a.json", "thread": {}}}
    assert client.value("command", "checks", {"arguments": []}, context) == ["RangeError", "TypeError", "TypeError", "TypeError"]
    assert client.callbacks == [("report", {"phase": "legacy-phase", "message": "a positional message", "callId": "c2"})]

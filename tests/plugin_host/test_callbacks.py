"""Callbacks: every context method sends its request with the call's callId, returns the
app's answer to plugin code, and raises PluginCallError when the app refuses."""

from __future__ import annotations

import pytest

from .client import Refuse

EVERY_CALLBACK = """
    import copy

    class Everything:
        display_name = "Everything"

        def execute(self, context, arguments):
            thread = copy.deepcopy(context.active_tab.thread)
            thread["title"] = "Renamed"
            return {
                "notify": context.notify("Hello", "warning"),
                "openLink": context.openLink("https://example.com/docs"),
                "pickFile": context.pickFile({"title": "Pick", "filters": [{"name": "Text", "extensions": ["txt"]}]}),
                "pick_file": context.pick_file(),
                "readWorkspaceFile": context.readWorkspaceFile("docs/plan.md"),
                "read_workspace_file": context.read_workspace_file("docs/other.md"),
                "writeWorkspaceFile": context.writeWorkspaceFile("out/a.md", "# A\\n"),
                "executeHostCommand": context.executeHostCommand("refreshTree"),
                "execute_host_command": context.execute_host_command("openSettings", {"tab": "plugins"}),
                "report": context.report({"phase": "loading", "message": "Loading records…"}),
                "report2": context.report("uploading"),
                "writeThread": context.activeTab.writeThread(thread),
            }
"""

ANSWERS = {"pickFile": "/abs/picked.txt", "readWorkspaceFile": "file text ✓"}


def answer(method, params):
    if method == "pickFile" and not params["options"]:
        return None
    return ANSWERS.get(method)


def test_every_callback_round_trips_with_the_call_id_and_returns_the_apps_answer(start_plugin):
    client, _ = start_plugin({"commands/everything.py": EVERY_CALLBACK}, answer)
    context = {"settings": {}, "activeTab": {"filename": "t.thread.json", "thread": {"title": "Old", "messages": []}}}
    result = client.execute("command", "everything", {"arguments": []}, context, call_id="c42")["result"]
    assert result == {"type": "value", "value": {
        "notify": None, "openLink": None, "pickFile": "/abs/picked.txt", "pick_file": None,
        "readWorkspaceFile": "file text ✓", "read_workspace_file": "file text ✓", "writeWorkspaceFile": None,
        "executeHostCommand": None, "execute_host_command": None, "report": None, "report2": None, "writeThread": None,
    }}
    assert client.callbacks == [
        ("notify", {"message": "Hello", "level": "warning", "callId": "c42"}),
        ("openLink", {"url": "https://example.com/docs", "callId": "c42"}),
        ("pickFile", {"options": {"title": "Pick", "filters": [{"name": "Text", "extensions": ["txt"]}]}, "callId": "c42"}),
        ("pickFile", {"options": {}, "callId": "c42"}),
        ("readWorkspaceFile", {"path": "docs/plan.md", "callId": "c42"}),
        ("readWorkspaceFile", {"path": "docs/other.md", "callId": "c42"}),
        ("writeWorkspaceFile", {"path": "out/a.md", "content": "# A\n", "callId": "c42"}),
        ("executeHostCommand", {"type": "refreshTree", "callId": "c42"}),
        ("executeHostCommand", {"type": "openSettings", "args": {"tab": "plugins"}, "callId": "c42"}),
        ("report", {"phase": "loading", "message": "Loading records…", "callId": "c42"}),
        ("report", {"phase": "uploading", "callId": "c42"}),
        ("writeThread", {"thread": {"title": "Renamed", "messages": []}, "callId": "c42"}),
    ]


def test_a_refused_callback_raises_plugin_call_error_with_the_apps_message(start_plugin):
    source = """
        from llmspace.plugin_api import PluginCallError

        class Reads:
            name = "reads"
            description = ""
            parameters = {"type": "object"}

            def execute(self, context, args):
                try:
                    context.read_workspace_file("../outside.txt")
                except PluginCallError as exc:
                    return {"message": str(exc), "code": exc.code}
                return "not refused"
    """

    def refuse(method, params):
        raise Refuse("The path escapes the workspace: ../outside.txt")

    client, _ = start_plugin({"tools/reads.py": source}, refuse)
    assert client.tool("reads")["value"] == {"message": "The path escapes the workspace: ../outside.txt", "code": -32010}


def test_an_uncaught_refusal_fails_the_call_with_the_apps_message(start_plugin):
    source = """
        class Picks:
            display_name = "Picks"

            def execute(self, context):
                return context.pick_file()
    """

    def refuse(method, params):
        raise Refuse("pickFile needs the desktop app")

    client, _ = start_plugin({"commands/picks.py": source}, refuse)
    error = client.execute("command", "picks", {"arguments": []})["error"]
    assert error["code"] == -32000
    assert error["message"] == "pickFile needs the desktop app"
    assert error["data"]["name"] == "PluginCallError"


def test_callbacks_from_many_threads_of_one_call_are_each_answered(start_plugin):
    source = """
        from concurrent.futures import ThreadPoolExecutor

        class Many:
            name = "many"
            description = ""
            parameters = {"type": "object"}

            def execute(self, context, args):
                with ThreadPoolExecutor(8) as pool:
                    return list(pool.map(lambda i: context.read_workspace_file(f"f{i}.txt"), range(40)))
    """
    client, _ = start_plugin({"tools/many.py": source}, lambda m, p: p["path"].upper())
    assert client.tool("many")["value"] == [f"F{i}.TXT" for i in range(40)]


@pytest.mark.parametrize(("call", "error"), [
    ("context.notify(42)", "TypeError"),
    ("context.notify('x', level='loud')", "ValueError"),
    ("context.open_link('')", "ValueError"),
    ("context.write_workspace_file('a.txt', b'bytes')", "TypeError"),
    ("context.execute_host_command('refreshTree', {1, 2})", "TypeError"),
])
def test_wrong_arguments_to_a_context_method_raise_before_anything_is_sent(start_plugin, call, error):
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

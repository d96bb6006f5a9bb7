"""Every host (Python; JavaScript under Bun and Node): context.settings, thread, variables,
arguments and the active tab's thread are read-only (Python: dict and list subclasses whose
changing methods raise TypeError, copy.deepcopy gives plain ones; JavaScript: deeply frozen,
structuredClone gives a mutable copy); the call's input is its own mutable copy; a missing
context gives empty read-only objects and no active tab."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from llmspace.plugin_host.plainjson import NotJSON, ReadOnlyDict, ReadOnlyList, freeze, thaw, to_json

from .conftest import Code

THREAD = {"title": "T", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}

TOOL = Code(py="""
        import copy
        import json

        class Probe:
            name = "probe"
            description = ""
            parameters = {"type": "object"}

            def execute(self, context, args):
                refused = []
                attempts = [
                    lambda: context.settings.__setitem__("x", 1),
                    lambda: context.settings.update(x=1),
                    lambda: context.thread.pop("title"),
                    lambda: context.thread["messages"].append({}),
                    lambda: context.thread["messages"][0]["content"].clear(),
                    lambda: context.thread["messages"][0].__setitem__("role", "x"),
                    lambda: context.variables.setdefault("y", 2),
                ]
                for attempt in attempts:
                    try:
                        attempt()
                    except TypeError as exc:
                        refused.append(type(exc).__name__)
                    else:
                        refused.append("allowed")
                thread = copy.deepcopy(context.thread)
                thread["messages"].append({"role": "assistant"})
                thread["messages"][0]["content"][0]["text"] = "changed"
                args["added"] = True
                return {
                    "refused": refused,
                    "types": [type(thread).__name__, type(thread["messages"]).__name__, type(thread["messages"][0]).__name__],
                    "copy": thread,
                    "args": args,
                    "unchanged": context.thread["messages"][0]["content"][0]["text"],
                    "dumps": json.loads(json.dumps(context.thread)) == json.loads(json.dumps(dict(context.thread))),
                    "is_dict": isinstance(context.settings, dict),
                    "cwd": context.variables.get("cwd"),
                }
""", js="""
    export default class Probe {
      name = "probe";
      description = "";
      parameters = { type: "object" };

      async execute(context, args) {
        const attempts = [
          () => { context.settings.x = 1; },
          () => { delete context.settings.endpoint; },
          () => { context.thread.title = "changed"; },
          () => { context.thread.messages.push({}); },
          () => { context.thread.messages[0].content.length = 0; },
          () => { context.thread.messages[0].role = "x"; },
          () => { context.variables.y = 2; },
          () => { context.variables.json.list.push(4); },
          () => { context.signal = null; },
          () => { context.extra = 1; },
        ];
        const refused = attempts.map((attempt) => {
          try {
            attempt();
            return "allowed";
          } catch (error) {
            return error.name;
          }
        });
        const copy = structuredClone(context.thread);
        copy.messages.push({ role: "assistant" });
        copy.messages[0].content[0].text = "changed";
        args.added = true;
        return {
          refused,
          frozen: [Object.isFrozen(context.settings), Object.isFrozen(context.thread.messages[0].content[0]),
                   Object.isFrozen(context.variables.json.list)],
          copyFrozen: Object.isFrozen(copy),
          copy,
          unchanged: context.thread.messages[0].content[0].text,
          args,
          json: JSON.stringify(context.variables),
        };
      }
    }
""")


def test_a_tool_sees_read_only_context_and_a_copy_is_mutable(start_any_plugin, any_host):
    client, _ = start_any_plugin({"tools/probe": TOOL})
    context = {"settings": {"endpoint": "https://example.com"}, "thread": THREAD,
               "variables": {"cwd": "/w", "json": {"list": [1, 2, 3]}}}
    value = client.tool("probe", {"q": "x"}, context)["value"]
    assert value["refused"] == ["TypeError"] * (10 if any_host.is_js else 7)
    assert value["copy"]["messages"][-1] == {"role": "assistant"}
    assert value["copy"]["messages"][0]["content"][0]["text"] == "changed"
    assert value["unchanged"] == "hi"
    assert value["args"] == {"q": "x", "added": True}
    if any_host.is_js:
        assert value["frozen"] == [True, True, True] and value["copyFrozen"] is False
        assert value["json"] == '{"cwd":"/w","json":{"list":[1,2,3]}}'
    else:
        assert value["types"] == ["dict", "list", "dict"]
        assert value["dumps"] is True and value["is_dict"] is True and value["cwd"] == "/w"


COMMAND = Code(py="""
    import operator

    class Probe:
        display_name = "Probe"

        def execute(self, context, arguments):
            attempts = [
                lambda: operator.setitem(context.arguments, 0, "y"),
                lambda: context.active_tab.thread.__setitem__("title", "changed"),
                lambda: context.settings["nested"].__setitem__("deep", 2),
            ]
            refused = []
            for attempt in attempts:
                try:
                    attempt()
                    refused.append("allowed")
                except TypeError as exc:
                    refused.append(type(exc).__name__)
            return [refused, type(arguments).__name__, arguments is context.arguments, context.activeTab.filename]
""", js="""
        export default class Probe {
          displayName = "Probe";

          async execute(context, args) {
            const attempts = [
              () => { args.push("x"); },
              () => { context.arguments[0] = "y"; },
              () => { context.activeTab.thread.title = "changed"; },
              () => { context.activeTab.filename = "other.json"; },
              () => { context.activeTab.writeThread = null; },
              () => { context.settings.nested.deep = 2; },
            ];
            return attempts.map((attempt) => {
              try {
                attempt();
                return "allowed";
              } catch (error) {
                return error.name;
              }
            });
          }
        }
""")


def test_a_commands_arguments_active_tab_and_settings_are_read_only(start_any_plugin, any_host):
    client, _ = start_any_plugin({"commands/probe": COMMAND})
    context = {"settings": {"nested": {"deep": 1}}, "activeTab": {"filename": "a.thread.json", "thread": THREAD}}
    answer = client.execute("command", "probe", {"arguments": ["a"]}, context)
    assert "result" in answer, answer
    value = answer["result"]["value"]
    if any_host.is_js:
        assert value == ["TypeError"] * 6
    else:
        assert value == [["TypeError"] * 3, "tuple", True, "a.thread.json"]


EMPTY = Code(py="""
    class Empty:
        name = "empty"
        description = ""
        parameters = {"type": "object"}

        def execute(self, context, args):
            views = [context.settings, context.thread, context.variables]
            refused = []
            for view in views:
                try:
                    view["x"] = 1
                except TypeError:
                    refused.append(True)
            return [dict(context.settings), dict(context.thread), dict(context.variables), refused == [True] * 3]
""", js="""
    export default class Empty {
      name = "empty"; description = ""; parameters = { type: "object" };
      execute(context) {
        return [context.settings, context.thread, context.variables,
                Object.isFrozen(context.settings) && Object.isFrozen(context.thread) && Object.isFrozen(context.variables)];
      }
    }
""")
NO_TAB = Code(py='class C:\n    display_name = "C"\n    def execute(self, context):\n'
                 '        return [context.active_tab, list(context.arguments)]\n',
              js='export default class { displayName = "C"; execute(context) { return [context.activeTab, context.arguments]; } }\n')


def test_a_missing_context_gives_empty_read_only_objects_and_no_active_tab(start_any_plugin):
    client, _ = start_any_plugin({"tools/empty": EMPTY, "commands/c": NO_TAB})
    assert client.execute("tool", "empty", {}, None)["result"]["value"] == [{}, {}, {}, True]
    assert client.execute("command", "c", {}, None)["result"]["value"] == [None, []]


# -- the Python host's read-only views ---------------------------------------------------------

def test_freeze_refuses_every_change_and_thaw_and_deepcopy_give_plain_json():
    frozen = freeze(THREAD)
    assert isinstance(frozen, ReadOnlyDict) and isinstance(frozen["messages"], ReadOnlyList)
    assert frozen == THREAD and json.loads(json.dumps(frozen)) == THREAD
    changes = [
        lambda: frozen.__setitem__("a", 1), lambda: frozen.__delitem__("title"), lambda: frozen.clear(),
        lambda: frozen.pop("title"), lambda: frozen.popitem(), lambda: frozen.setdefault("a", 1),
        lambda: frozen.update(a=1), lambda: frozen.__ior__({"a": 1}),
        lambda: frozen["messages"].append(1), lambda: frozen["messages"].extend([1]),
        lambda: frozen["messages"].insert(0, 1), lambda: frozen["messages"].pop(),
        lambda: frozen["messages"].remove(THREAD["messages"][0]), lambda: frozen["messages"].sort(),
        lambda: frozen["messages"].reverse(), lambda: frozen["messages"].clear(),
        lambda: frozen["messages"].__setitem__(0, 1), lambda: frozen["messages"].__delitem__(0),
        lambda: frozen["messages"].__iadd__([1]), lambda: frozen["messages"].__imul__(2),
    ]
    for change in changes:
        with pytest.raises(TypeError, match="read-only"):
            change()
    assert frozen == THREAD
    for plain in (copy.deepcopy(frozen), thaw(frozen), pickle.loads(pickle.dumps(frozen))):
        assert type(plain) is dict and type(plain["messages"]) is list and type(plain["messages"][0]) is dict
        assert plain == THREAD
    assert type(copy.deepcopy(frozen["messages"])) is list
    shallow = copy.copy(frozen)
    shallow["new"] = 1
    assert "new" not in frozen


def test_to_json_accepts_json_like_values_and_names_the_first_thing_that_is_not():
    import enum

    class Color(enum.StrEnum):
        RED = "red"

    assert to_json({"a": (1, 2.5, True, None), "b": freeze({"c": ["d"]}), "e": Color.RED}) == {
        "a": [1, 2.5, True, None], "b": {"c": ["d"]}, "e": "red"}
    assert type(to_json(Color.RED)) is str
    with pytest.raises(NotJSON) as caught:
        to_json({"a": [1, {"b": {3}}]})
    assert (caught.value.type, caught.value.where) == ("set", "$.a[1].b")
    shared = [1]
    assert to_json([shared, shared]) == [[1], [1]], "a value seen twice is no cycle"
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(NotJSON):
        to_json(deep)

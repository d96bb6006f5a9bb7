"""context.settings/thread/variables/arguments and the active tab's thread are read-only;
copy.deepcopy gives plain mutable dicts and lists; json.dumps works on them as they are."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from llmspace.plugin_host.plainjson import NotJSON, ReadOnlyDict, ReadOnlyList, freeze, thaw, to_json

THREAD = {"title": "T", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}


def test_a_tool_sees_read_only_context_and_deepcopy_gives_mutable_copies(start_plugin):
    source = """
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
                    except TypeError:
                        refused.append(True)
                thread = copy.deepcopy(context.thread)
                thread["messages"].append({"role": "assistant"})
                thread["messages"][0]["content"][0]["text"] = "changed"
                return {
                    "refused": refused,
                    "types": [type(thread).__name__, type(thread["messages"]).__name__, type(thread["messages"][0]).__name__],
                    "copy": thread,
                    "unchanged": context.thread["messages"][0]["content"][0]["text"],
                    "dumps": json.loads(json.dumps(context.thread)) == json.loads(json.dumps(dict(context.thread))),
                    "is_dict": isinstance(context.settings, dict),
                    "cwd": context.variables.get("cwd"),
                }
    """
    client, _ = start_plugin({"tools/probe.py": source})
    value = client.tool("probe", {}, {"settings": {"a": 1}, "thread": THREAD, "variables": {"cwd": "/w"}})["value"]
    assert value["refused"] == [True] * 7
    assert value["types"] == ["dict", "list", "dict"]
    assert value["copy"]["messages"][1] == {"role": "assistant"}
    assert value["unchanged"] == "hi"
    assert value["dumps"] is True and value["is_dict"] is True and value["cwd"] == "/w"


def test_command_arguments_are_a_tuple_and_the_active_tab_thread_is_read_only(start_plugin):
    source = """
        class Probe:
            display_name = "Probe"

            def execute(self, context, arguments):
                try:
                    context.active_tab.thread["title"] = "x"
                    refused = False
                except TypeError:
                    refused = True
                return [type(arguments).__name__, arguments is context.arguments, context.activeTab.filename, refused]
    """
    client, _ = start_plugin({"commands/probe.py": source})
    context = {"activeTab": {"filename": "a.thread.json", "thread": THREAD}}
    assert client.execute("command", "probe", {"arguments": ["a"]}, context)["result"]["value"] == [
        "tuple", True, "a.thread.json", True]


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

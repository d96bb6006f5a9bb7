"""context.settings, thread, variables, arguments and the active tab's thread are deeply
frozen (assignment throws in module code, which is strict); structuredClone gives a mutable
copy; the call's input is the call's own, mutable copy."""

from __future__ import annotations

THREAD = {"title": "T", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}

TOOL = """
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
"""


def test_a_tool_sees_a_deeply_frozen_context_and_structured_clone_gives_a_mutable_copy(start_plugin):
    client, _ = start_plugin({"tools/probe": TOOL})
    context = {"settings": {"endpoint": "https://example.com"}, "thread": THREAD,
               "variables": {"cwd": "/w", "json": {"list": [1, 2, 3]}}}
    value = client.tool("probe", {"q": "x"}, context)["value"]
    assert value["refused"] == ["TypeError"] * 10
    assert value["frozen"] == [True, True, True]
    assert value["copyFrozen"] is False
    assert value["copy"]["messages"][-1] == {"role": "assistant"}
    assert value["copy"]["messages"][0]["content"][0]["text"] == "changed"
    assert value["unchanged"] == "hi"
    assert value["args"] == {"q": "x", "added": True}
    assert value["json"] == '{"cwd":"/w","json":{"list":[1,2,3]}}'


def test_a_commands_arguments_and_active_tab_are_frozen(start_plugin):
    source = """
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
    """
    client, _ = start_plugin({"commands/probe": source})
    context = {"settings": {"nested": {"deep": 1}}, "activeTab": {"filename": "a.thread.json", "thread": THREAD}}
    assert client.value("command", "probe", {"arguments": ["a"]}, context) == ["TypeError"] * 6


def test_a_missing_context_gives_empty_frozen_objects_and_no_active_tab(start_plugin):
    tool = """
        export default class Empty {
          name = "empty"; description = ""; parameters = { type: "object" };
          execute(context) {
            return [context.settings, context.thread, context.variables,
                    Object.isFrozen(context.settings) && Object.isFrozen(context.thread) && Object.isFrozen(context.variables)];
          }
        }
    """
    command = 'export default class { displayName = "C"; execute(context) { return [context.activeTab, context.arguments]; } }\n'
    client, _ = start_plugin({"tools/empty": tool, "commands/c": command})
    assert client.execute("tool", "empty", {}, None)["result"]["value"] == [{}, {}, {}, True]
    assert client.execute("command", "c", {}, None)["result"]["value"] == [None, []]

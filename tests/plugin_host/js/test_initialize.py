"""initialize: each code file is imported, instantiated and checked on its own, under Bun
(.ts, .js, .mjs) and Node (.js, .mjs; .ts with type stripping); the answer lists every
extension's metadata, or the stage and message of its failure."""

from __future__ import annotations

import pytest

from ..client import write_plugin
from .conftest import ALL_SUFFIXES, TYPESCRIPT, variant_id

BARE_TOOL = """
    export default class Bare {
      name = "bare";
      description = "";
      parameters = { type: "object" };
      execute() {}
    }
"""

FAILING = {
    "tools/syntax": "export default class {\n  name = ;\n}\n",
    "tools/throws-at-import": 'throw new RangeError("no config at import");\nexport default class {}\n',
    "tools/missing-import": 'import { x } from "./_nowhere.mjs";\nexport default class { y = x; }\n',
    "tools/constructor": 'export default class { constructor() { throw new TypeError("no token"); } }\n',
    "tools/no-default": "export class Named {}\n",
    "tools/not-a-class": "export default 42;\n",
    "tools/arrow": "export default () => ({});\n",
    "tools/no-name": 'export default class { description = ""; parameters = { type: "object" }; execute() {} }\n',
    "tools/array-schema": 'export default class { name = "a"; description = ""; parameters = []; execute() {} }\n',
    "tools/bad-strict": 'export default class { name = "a"; description = ""; parameters = { type: "object" }; strict = "yes"; execute() {} }\n',
    "tools/no-execute": 'export default class { name = "a"; description = ""; parameters = { type: "object" }; execute = 3; }\n',
    "tools/bad-dispose": 'export default class { name = "a"; description = ""; parameters = { type: "object" }; execute() {} dispose = "x"; }\n',
    "tools/nan-schema": 'export default class { name = "a"; description = ""; parameters = { type: "object", maximum: NaN }; execute() {} }\n',
    "commands/blank-name": 'export default class { displayName = "  "; execute() {} }\n',
    "commands/getter-throws": 'export default class { get displayName() { throw new Error("boom in getter"); } execute() {} }\n',
    "thread-storages/no-capability": 'export default class { displayName = "S"; capabilities = { read: false }; }\n',
    "thread-storages/no-read": 'export default class { displayName = "S"; capabilities = { read: true }; resolveLatest() {} }\n',
    "thread-storages/link-write-only": 'export default class { displayName = "S"; deepLinkId = "s"; capabilities = { write: true }; write() {} }\n',
    "thread-storages/bad-link": 'export default class { displayName = "S"; deepLinkId = "Team Library"; capabilities = { read: true }; resolveLatest() {} read() {} }\n',
    "tools/fine": BARE_TOOL,
}


@pytest.mark.parametrize("variant", ALL_SUFFIXES, ids=variant_id, indirect=True)
def test_import_constructor_and_contract_failures_fail_only_their_extension(start_plugin):
    client, extensions = start_plugin(FAILING)
    stage = {key: (e["error"]["stage"] if e["status"] == "failed" else "active") for key, e in extensions.items()}
    assert stage == {
        "tool:syntax": "import", "tool:throws-at-import": "import", "tool:missing-import": "import",
        "tool:constructor": "constructor",
        "tool:no-default": "contract", "tool:not-a-class": "contract", "tool:arrow": "contract", "tool:no-name": "contract",
        "tool:array-schema": "contract", "tool:bad-strict": "contract", "tool:no-execute": "contract",
        "tool:bad-dispose": "contract", "tool:nan-schema": "contract", "command:blank-name": "contract",
        "command:getter-throws": "contract", "thread-storage:no-capability": "contract",
        "thread-storage:no-read": "contract", "thread-storage:link-write-only": "contract",
        "thread-storage:bad-link": "contract", "tool:fine": "active",
    }
    message = {key: e["error"]["message"] for key, e in extensions.items() if e["status"] == "failed"}
    assert message["tool:throws-at-import"] == "RangeError: no config at import"
    assert "_nowhere.mjs" in message["tool:missing-import"]
    assert message["tool:constructor"] == "TypeError: no token"
    assert "throws-at-import" in extensions["tool:throws-at-import"]["error"]["stack"]
    assert "constructor" in extensions["tool:constructor"]["error"]["stack"]
    assert "host.mjs" not in extensions["tool:constructor"]["error"]["stack"]
    assert "loading.mjs" not in extensions["tool:constructor"]["error"]["stack"]
    assert message["tool:no-default"].startswith("the file has no default export")
    assert message["tool:not-a-class"] == "the default export must be a class (instantiated with no arguments), not 42"
    assert "arrow function" in message["tool:arrow"]
    assert message["tool:no-name"] == "`name` must be a non-empty string, not missing"
    assert message["tool:array-schema"] == '`parameters` must be a JSON Schema object with "type": "object"'
    assert message["tool:bad-strict"] == '`strict` must be true or false, not "yes"'
    assert message["tool:no-execute"] == "`execute` must be a method, not 3"
    assert message["tool:bad-dispose"] == '`dispose` must be a method, not "x"'
    assert message["tool:nan-schema"] == "`parameters` is not JSON: NaN at $.maximum is not JSON"
    assert message["command:blank-name"] == '`displayName` must be a non-empty string, not "  "'
    assert message["command:getter-throws"] == "Error: boom in getter"
    assert message["thread-storage:no-capability"] == "`capabilities` must allow read, write or both"
    assert message["thread-storage:no-read"] == "`read` must be a method, not missing"
    assert message["thread-storage:link-write-only"] == "`deepLinkId` is for readable storages only"
    assert message["thread-storage:bad-link"] == '`deepLinkId` must match ^[a-z0-9._-]+$, not "Team Library"'
    for key, entry in extensions.items():
        if entry["status"] == "failed" and entry["error"]["stage"] == "contract" and key != "command:getter-throws":
            assert entry["error"]["stack"] == "", key
    assert client.execute("tool", "fine", {"arguments": {}})["result"] == {"type": "value", "value": None}
    refused = client.execute("tool", "constructor", {"arguments": {}})["error"]
    assert refused["code"] == -32002 and refused["data"]["reason"] == 'no active tool "constructor" in this plugin'


def test_a_syntax_error_names_the_problem(start_plugin):
    _, extensions = start_plugin({"tools/syntax": "export default class {\n  name = ;\n}\n"})
    error = extensions["tool:syntax"]["error"]
    assert error["stage"] == "import"
    assert error["message"].split(":")[0] in ("SyntaxError", "BuildMessage"), error


def test_entries_that_are_no_extension_fail_their_contract(start_host, variant, tmp_path):
    root = write_plugin(tmp_path / "plugin", {f"tools/a{variant.suffix}": BARE_TOOL, f"tools/_helper{variant.suffix}": BARE_TOOL,
                                              "tools/legacy.py": "class A: ...\n"})
    tool_file = str(root / f"tools/a{variant.suffix}")
    answer = start_host().initialize(root, [
        {"kind": "tool", "id": "a", "path": tool_file},
        {"kind": "tool", "id": "a", "path": tool_file},
        {"kind": "tool", "id": "helper", "path": str(root / f"tools/_helper{variant.suffix}")},
        {"kind": "skill", "id": "s", "path": tool_file},
        {"kind": "tool", "id": "legacy", "path": str(root / "tools/legacy.py")},
        {"kind": "tool", "id": "gone", "path": str(root / f"tools/gone{variant.suffix}")},
    ])
    got = [(e["status"], e.get("error", {}).get("stage"), e.get("error", {}).get("message", "")) for e in answer["extensions"]]
    assert got[0] == ("active", None, "")
    assert got[1] == ("failed", "contract", 'a second tool with the id "a"')
    assert got[2] == ("failed", "contract", f"_helper{variant.suffix} is a helper (its name starts with _), not an extension")
    assert got[3][:2] == ("failed", "contract") and got[3][2].startswith("not an extension file entry")
    assert got[4][:2] == ("failed", "import") and got[4][2].endswith("is not a .ts, .js or .mjs file")
    assert got[5][:2] == ("failed", "import") and f"gone{variant.suffix}" in got[5][2]


def test_a_helper_module_is_imported_by_relative_path(start_plugin, variant):
    client, extensions = start_plugin({
        "tools/_shared": "export const greeting = (who) => `Hello, ${who}!`;\n",
        "tools/greets": f"""
            import {{ greeting }} from "./_shared{variant.suffix}";
            export default class {{ name = "greets"; description = ""; parameters = {{ type: "object" }};
              execute(context, args) {{ return greeting(args.who); }} }}
        """,
    })
    assert extensions["tool:greets"]["status"] == "active", extensions
    assert client.value("tool", "greets", {"arguments": {"who": "Ada"}}) == "Hello, Ada!"


TYPE_IMPORTS = """
    import type { PluginToolContext, PluginToolExtension } from "@llm-space/core";
    import { type Thread } from "@llm-space/core";
    import type * as Core from "@llm-space/core";

    interface Args { who?: string }

    export default class Typed implements PluginToolExtension {
      name: string = "typed";
      description = "Uses the types of @llm-space/core.";
      parameters = { type: "object", properties: { who: { type: "string" } } } as const;
      private readonly greeting: string = "Hi";

      async execute(context: PluginToolContext, args: Args): Promise<string> {
        const thread = context.thread as Thread;
        const extra: Core.Thread | undefined = undefined;
        return `${this.greeting}, ${args.who ?? "nobody"} (${(thread as any).title ?? "untitled"})${extra ?? ""}`;
      }
    }
"""


@pytest.mark.parametrize("variant", TYPESCRIPT, ids=variant_id, indirect=True)
def test_type_imports_of_llm_space_core_work_in_typescript(start_plugin):
    client, extensions = start_plugin({"tools/typed": TYPE_IMPORTS})
    assert extensions["tool:typed"]["status"] == "active", extensions
    assert client.value("tool", "typed", {"arguments": {"who": "Ada"}}, {"thread": {"title": "T"}}) == "Hi, Ada (T)"


CORE_MESSAGE = 'Error: @llm-space/core provides TypeScript types only; use "import type"'


@pytest.mark.parametrize("variant", ALL_SUFFIXES, ids=variant_id, indirect=True)
def test_a_value_import_of_llm_space_core_fails_with_a_clear_message(start_plugin):
    _, extensions = start_plugin({
        "tools/named": 'import { definePlugin } from "@llm-space/core";\nexport default class { constructor() { definePlugin; } }\n',
        "tools/default": 'import core from "@llm-space/core";\nexport default class { constructor() { core; } }\n',
        "tools/fine": BARE_TOOL,
    })
    for key in ("tool:named", "tool:default"):
        error = extensions[key]["error"]
        assert error["stage"] == "import", extensions
        assert error["message"].startswith(CORE_MESSAGE), error
    assert extensions["tool:fine"]["status"] == "active"

"""initialize: each code file is imported, instantiated and checked on its own; the answer
lists every extension's metadata, or the stage and message of its failure."""

from __future__ import annotations

import re
import sys

import pytest

from .client import HostClient, write_plugin
from .conftest import Code
from .js.conftest import ALL_SUFFIXES, variant_id

TOOL = """
    class ReadProjectFile:
        name = "read_project_file"
        description = "Read a file."
        parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
        strict = True

        def execute(self, context, args):
            return args
"""

SNAKE_COMMAND = """
    class Hello:
        display_name = "Say hello"
        description = "Greets."

        def execute(self, context):
            return None
"""

SNAKE_STORAGE = """
    class TeamLibrary:
        display_name = "Team Library"
        description = "Threads in a team service."
        deep_link_id = "team-library"
        capabilities = {"read": True, "write": True}

        def resolve_latest(self, id, context):
            return {"id": id}

        def read(self, locator, context):
            return {}

        def write(self, thread, id, context):
            return {"id": "x"}
"""

CAMEL_COMMAND = """
    class Hello:
        displayName = "Say hello"
        description = "Greets."

        async def execute(self, context, args):
            return None
"""

CAMEL_STORAGE = """
    class TeamLibrary:
        displayName = "Team Library"
        description = "Threads in a team service."
        deepLinkId = "team-library"
        capabilities = {"read": True, "write": True}

        async def resolveLatest(self, id, context):
            return {"id": id}

        async def read(self, locator, context):
            return {}

        async def write(self, thread, id, context):
            return {"id": "x"}
"""

EXPECTED = {
    "tool:read-project-file": {
        "name": "read_project_file", "description": "Read a file.", "strict": True,
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
    "command:hello": {"displayName": "Say hello", "description": "Greets."},
    "thread-storage:team-library": {
        "displayName": "Team Library", "description": "Threads in a team service.", "deepLinkId": "team-library",
        "capabilities": {"read": True, "write": True, "list": False},
    },
}


# -- every host (Python; JavaScript under Bun and Node; every JavaScript suffix) -----------------

EVERY_KIND = {
    "tools/read-project-file": Code(py=TOOL, js="""
    export default class ReadProjectFile {
      name = "read_project_file";
      description = "Read a file.";
      parameters = { type: "object", properties: { path: { type: "string" } }, required: ["path"] };
      strict = true;

      async execute(context, args) {
        return args;
      }
    }
"""),
    "commands/hello": Code(py=SNAKE_COMMAND, js="""
    export default class Hello {
      displayName = "Say hello";
      description = "Greets.";

      async execute(context, args) {
        return null;
      }
    }
"""),
    "thread-storages/team-library": Code(py=SNAKE_STORAGE, js="""
    export default class TeamLibrary {
      displayName = "Team Library";
      description = "Threads in a team service.";
      deepLinkId = "team-library";
      capabilities = { read: true, write: true };

      async resolveLatest(id, context) { return { id }; }
      async read(locator, context) { return {}; }
      async write(thread, id, context) { return { id: "x" }; }
    }
"""),
    "tools/bare": Code(py='class Bare:\n    name = "bare"\n    description = ""\n    parameters = {"type": "object"}\n'
                          '    def execute(self, context, args): ...\n', js="""
    export default class Bare {
      name = "bare";
      description = "";
      parameters = { type: "object" };
      execute() {}
    }
"""),
    "commands/bare": Code(py='class Bare:\n    display_name = "Bare"\n    def execute(self, context): ...\n',
                          js='export default class { displayName = "Bare"; execute() {} }\n'),
    "thread-storages/uploader": Code(py="""
        class Uploader:
            @property
            def display_name(self):
                return "Uploader"

            @property
            def capabilities(self):
                return {"write": True}

            def write(self, thread, id, context):
                return {"id": id or "new"}
    """, js="""
    class Uploader {
      get displayName() { return "Uploader"; }
      get capabilities() { return { write: true }; }
      write(thread, id, context) { return { id: id ?? "new" }; }
    }
    export default Uploader;
"""),
}
EVERY_KEY = {
    **EXPECTED,
    "tool:bare": {"name": "bare", "description": "", "parameters": {"type": "object"}, "strict": False},
    "command:bare": {"displayName": "Bare", "description": ""},
    "thread-storage:uploader": {"displayName": "Uploader", "description": "", "deepLinkId": None,
                                "capabilities": {"read": False, "write": True, "list": False}},
}


@pytest.mark.parametrize("any_host", [("python", ".py"), *ALL_SUFFIXES], ids=variant_id, indirect=True)
def test_every_kind_reports_its_metadata_with_every_key_and_optional_ones_have_their_default(start_any_plugin):
    client, extensions = start_any_plugin(EVERY_KIND)
    assert {key: e["status"] for key, e in extensions.items()} == dict.fromkeys(EVERY_KEY, "active"), extensions
    assert {key: e["metadata"] for key, e in extensions.items()} == EVERY_KEY
    assert client.result("ping") == {}


def test_the_answer_names_the_runtime_and_keeps_the_order_of_files(start_any_host, any_host, tmp_path):
    suffix = any_host.variant.suffix if any_host.variant is not None else ".py"
    lang = "js" if any_host.is_js else "py"
    root = write_plugin(tmp_path / "ordered", {f"commands/hello{suffix}": getattr(EVERY_KIND["commands/hello"], lang),
                                               f"tools/read-project-file{suffix}": getattr(EVERY_KIND["tools/read-project-file"], lang)})
    files = [{"kind": "tool", "id": "read-project-file", "path": str(root / f"tools/read-project-file{suffix}")},
             {"kind": "command", "id": "hello", "path": str(root / f"commands/hello{suffix}")}]
    answer = start_any_host().initialize(root, files)
    if any_host.variant is None:
        assert answer["runtime"] == {"name": "python", "version": "{}.{}.{}".format(*sys.version_info[:3])}
    else:
        assert answer["runtime"] == {"name": any_host.variant.runtime.name, "version": any_host.variant.runtime.version_text}
    assert [(e["kind"], e["id"], e["status"]) for e in answer["extensions"]] == [
        ("tool", "read-project-file", "active"), ("command", "hello", "active")]


# -- the Python host -----------------------------------------------------------------------------


@pytest.mark.parametrize(("command", "storage"), [(SNAKE_COMMAND, SNAKE_STORAGE), (CAMEL_COMMAND, CAMEL_STORAGE)],
                         ids=["snake_case", "camelCase"])
def test_initialize_answers_the_metadata_of_a_tool_a_command_and_a_storage(start_plugin, command, storage):
    _, extensions = start_plugin({
        "tools/read-project-file.py": TOOL,
        "commands/hello.py": command,
        "thread-storages/team-library.py": storage,
    })
    assert {key: e["status"] for key, e in extensions.items()} == dict.fromkeys(EXPECTED, "active")
    assert {key: e["metadata"] for key, e in extensions.items()} == EXPECTED


def test_an_import_error_fails_only_that_extension(start_plugin):
    _, extensions = start_plugin({"tools/good.py": TOOL, "tools/broken.py": "import no_such_module_here\n"})
    assert extensions["tool:good"]["status"] == "active"
    broken = extensions["tool:broken"]
    assert broken["status"] == "failed"
    assert broken["error"]["stage"] == "import"
    assert broken["error"]["message"] == "ModuleNotFoundError: No module named 'no_such_module_here'"
    assert "Traceback" in broken["error"]["stack"] and "broken.py" in broken["error"]["stack"]


def test_a_syntax_error_and_a_sys_exit_at_import_are_import_failures(start_plugin):
    _, extensions = start_plugin({"tools/syntax.py": "def (:\n", "tools/exits.py": "import sys\nsys.exit(3)\n",
                                  "tools/good.py": TOOL})
    assert extensions["tool:syntax"]["error"]["stage"] == "import"
    assert extensions["tool:syntax"]["error"]["message"].startswith("SyntaxError")
    assert extensions["tool:exits"]["error"]["stage"] == "import"
    assert extensions["tool:exits"]["error"]["message"] == "SystemExit: 3"
    assert extensions["tool:good"]["status"] == "active"


def test_a_constructor_error_fails_only_that_extension(start_plugin):
    broken = """
        class Broken:
            name = "broken"
            description = ""
            parameters = {"type": "object"}

            def __init__(self):
                raise ValueError("no token")

            def execute(self, context, args): ...
    """
    _, extensions = start_plugin({"tools/good.py": TOOL, "tools/broken.py": broken})
    assert extensions["tool:good"]["status"] == "active"
    error = extensions["tool:broken"]["error"]
    assert error["stage"] == "constructor"
    assert error["message"] == "ValueError: no token"
    assert "no token" in error["stack"] and "__init__" in error["stack"]


def cls(*lines: str) -> str:
    """A one-class file whose body is `lines`."""
    return "class X:\n" + "".join(f"    {line}\n" for line in lines)


TOOL_BASICS = ('name = "t"', 'description = ""', 'parameters = {"type": "object"}')
EXECUTE = "def execute(self, context, args): ..."
READS = ('capabilities = {"read": True, "write": False}', "def resolve_latest(self, i, c): ...", "def read(self, l, c): ...")
CONTRACT_VIOLATIONS = {
    "tool without name": ("tools", cls('description = ""', 'parameters = {"type": "object"}', EXECUTE),
                          "`name` must be a non-empty string"),
    "tool with empty name": ("tools", cls('name = " "', *TOOL_BASICS[1:], EXECUTE), "`name` must be a non-empty string"),
    "tool without description": ("tools", cls('name = "t"', 'parameters = {"type": "object"}', EXECUTE),
                                 "`description` must be a string"),
    "parameters not an object schema": ("tools", cls(*TOOL_BASICS[:2], 'parameters = {"type": "array"}', EXECUTE),
                                        '"type": "object"'),
    "parameters not JSON": ("tools", cls(*TOOL_BASICS[:2], 'parameters = {"type": "object", "x": {1, 2}}', EXECUTE),
                            "`parameters` is not JSON"),
    "strict not a bool": ("tools", cls(*TOOL_BASICS, 'strict = "yes"', EXECUTE), "`strict` must be true or false"),
    "tool without execute": ("tools", cls(*TOOL_BASICS), "`execute` must be a method"),
    "dispose not a method": ("tools", cls(*TOOL_BASICS, EXECUTE, "dispose = 3"), "`dispose` must be a method"),
    "command without display name": ("commands", cls("def execute(self, c): ..."), "`display_name` must be"),
    "storage without capabilities": ("thread-storages", cls('display_name = "S"'), "`capabilities` must be a dict"),
    "storage allowing nothing": ("thread-storages", cls('display_name = "S"', 'capabilities = {"read": False, "write": False}'),
                                 "must allow read, write or both"),
    "readable storage without read": ("thread-storages", cls('display_name = "S"', *READS[:2]), "`read` must be a method"),
    "writable storage without write": ("thread-storages", cls('display_name = "S"', 'capabilities = {"read": False, "write": True}'),
                                       "`write` must be a method"),
    "bad deep link id": ("thread-storages", cls('display_name = "S"', 'deep_link_id = "Team Library"', *READS),
                         "`deep_link_id` must match"),
    "deep link on a write-only storage": ("thread-storages", cls('display_name = "S"', 'deep_link_id = "s"',
                                                                 'capabilities = {"read": False, "write": True}',
                                                                 "def write(self, t, i, c): ..."), "readable storages only"),
}


@pytest.mark.parametrize("case", sorted(CONTRACT_VIOLATIONS))
def test_a_contract_error_fails_only_that_extension(start_plugin, case):
    folder, source, expected = CONTRACT_VIOLATIONS[case]
    _, extensions = start_plugin({f"{folder}/bad.py": source, "tools/good.py": TOOL})
    assert extensions["tool:good"]["status"] == "active"
    bad = next(e for key, e in extensions.items() if key.endswith(":bad"))
    assert bad["status"] == "failed"
    assert bad["error"]["stage"] == "contract"
    assert expected in bad["error"]["message"]


def test_the_default_attribute_names_the_class_among_several(start_plugin):
    source = """
        class Helper:
            pass

        class Real:
            name = "real"
            description = "the default"
            parameters = {"type": "object"}

            def execute(self, context, args):
                return "real"

        default = Real
    """
    client, extensions = start_plugin({"tools/real.py": source})
    assert extensions["tool:real"]["metadata"]["description"] == "the default"
    assert client.tool("real") == {"type": "value", "value": "real"}


def test_the_only_class_defined_in_the_module_is_the_default_export_and_imported_classes_do_not_count(start_plugin):
    source = """
        from collections import OrderedDict
        from pathlib import Path

        class Only:
            name = "only"
            description = ""
            parameters = {"type": "object"}

            def execute(self, context, args):
                return "only"
    """
    client, extensions = start_plugin({"tools/only.py": source})
    assert extensions["tool:only"]["status"] == "active"
    assert client.tool("only")["value"] == "only"


def test_two_classes_and_no_default_attribute_is_a_contract_error(start_plugin):
    source = "class A:\n    pass\n\nclass B:\n    pass\n"
    _, extensions = start_plugin({"tools/two.py": source, "tools/none.py": "X = 1\n",
                                  "tools/instance.py": "class A:\n    pass\n\ndefault = A()\n"})
    assert extensions["tool:two"]["error"]["stage"] == "contract"
    assert "2 classes (A, B)" in extensions["tool:two"]["error"]["message"]
    assert "defines no class" in extensions["tool:none"]["error"]["message"]
    assert "`default` must be a class" in extensions["tool:instance"]["error"]["message"]


def test_helper_files_and_vendor_packages_import_from_extension_files(start_plugin):
    client, extensions = start_plugin({
        "vendor/vendored_lib/__init__.py": "VALUE = 'from vendor'\n",
        "tools/_shared.py": "def shout(text):\n    return text.upper()\n",
        "tools/uses_helpers.py": """
            from _shared import shout
            from vendored_lib import VALUE

            class UsesHelpers:
                name = "uses_helpers"
                description = ""
                parameters = {"type": "object"}

                def execute(self, context, args):
                    return [shout("hi"), VALUE]
        """,
        "commands/also.py": """
            from _shared import shout

            class Also:
                display_name = "Also"

                def execute(self, context):
                    return shout("command")
        """,
    })
    assert set(extensions) == {"tool:uses_helpers", "command:also"}, "the helper is no extension"
    assert client.tool("uses_helpers")["value"] == ["HI", "from vendor"]
    assert client.execute("command", "also", {"arguments": []})["result"]["value"] == "COMMAND"


def test_a_helper_file_passed_as_an_extension_is_refused(start_plugin, tmp_path):
    root = write_plugin(tmp_path / "p2", {"tools/_helper.py": "class H:\n    pass\n"})
    client = HostClient(tmp_path)
    try:
        answer = client.initialize(root, [{"kind": "tool", "id": "_helper", "path": str(root / "tools/_helper.py")}])
    finally:
        client.close()
    assert answer["extensions"][0]["error"]["stage"] == "contract"


def test_a_protocol_version_other_than_1_and_a_second_initialize_are_refused(tmp_path):
    root = write_plugin(tmp_path / "p", {})
    client = HostClient(tmp_path)
    try:
        wrong = client.call("initialize", {"protocolVersion": 2, "plugin": {"root": str(root)}, "files": []})
        assert wrong["error"]["code"] == -32602
        client.initialize(root)
        again = client.call("initialize", {"protocolVersion": 1, "plugin": {"root": str(root)}, "files": []})
        assert again["error"]["code"] == -32600
    finally:
        client.close()


def test_the_host_imports_no_pydantic_tkinter_mcp_or_app_module_but_the_api_and_protocol(start_plugin):
    source = """
        import sys

        class Modules:
            name = "modules"
            description = ""
            parameters = {"type": "object"}

            def execute(self, context, args):
                return sorted(sys.modules)
    """
    client, _ = start_plugin({"tools/modules.py": source})
    modules = client.tool("modules")["value"]
    heavy = [m for m in modules if re.match(r"(pydantic|tkinter|_tkinter|mcp|ttkbootstrap|orjson|jsonschema)(\.|$)", m)]
    assert heavy == []
    ours = {m for m in modules if m.startswith("llmspace.")}
    allowed = {"llmspace.__main__", "llmspace.plugin_api", "llmspace.plugin_protocol"}
    assert ours - allowed == {m for m in ours if m.startswith("llmspace.plugin_host")}


def test_a_failed_extension_cannot_be_executed(start_plugin):
    client, _ = start_plugin({"tools/broken.py": "raise RuntimeError('boom')\n"})
    answer = client.execute("tool", "broken", {"arguments": {}})
    assert answer["error"]["code"] == -32002
    assert "broken" in answer["error"]["data"]["reason"]

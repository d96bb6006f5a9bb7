"""The built-in tool definitions: reference order, strict schemas, groups, and the CLI listing."""

from __future__ import annotations

import json

from llmspace.cli import main
from llmspace.tools.builtins import builtin_groups, builtin_tools, get_implementation
from llmspace.tools.validation import validator_for

ORDER = ["web_fetch", "web_search", "weather_report", "read", "write", "skill", "edit", "ls", "tree", "grep", "glob",
         "bash", "present_files", "todo_write", "sleep", "ask_user_question"]


def test_builtins_are_listed_in_the_reference_order() -> None:
    assert [t.name for t in builtin_tools()] == ORDER


def test_every_builtin_is_strict_closed_valid_and_implemented() -> None:
    for tool in builtin_tools():
        assert tool.type == "builtin" and tool.strict is True
        assert tool.parameters["type"] == "object" and tool.parameters["additionalProperties"] is False
        assert validator_for(tool.parameters) is not None, tool.name
        assert get_implementation(tool.name) is not None, tool.name
        props = list(tool.parameters["properties"])
        if "description" in props:
            assert props[0] == "description" and "description" in tool.parameters["required"]


def test_groups_cover_every_builtin_once_in_order() -> None:
    groups = builtin_groups()
    assert list(groups) == ["fileSystem", "web", "misc"]
    flat = [n for names in groups.values() for n in names]
    assert sorted(flat) == sorted(ORDER) and len(flat) == len(ORDER)
    for names in groups.values():
        assert names == [n for n in ORDER if n in names]


def test_builtin_tools_are_fresh_copies() -> None:
    first = builtin_tools()
    first[0].parameters["properties"].clear()
    assert builtin_tools()[0].parameters["properties"]


def test_new_tool_nodes_write_their_fields() -> None:
    read = next(t for t in builtin_tools() if t.name == "read")
    dumped = read.model_dump(exclude_unset=True)
    assert list(dumped)[:3] == ["type", "name", "description"] and dumped["strict"] is True


def test_tools_list_prints_groups_and_parameters(home, capsys) -> None:
    assert main(["tools", "list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("fileSystem:\n")
    assert "  read(description*: string, path*: string, offset: integer, limit: integer)" in out
    assert "\nweb:\n" in out and "\nmisc:\n" in out
    assert "ask_user_question(questions*: array)  (needs a human answer)" in out


def test_tools_list_json(home, capsys) -> None:
    assert main(["tools", "list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in data if d["group"] == "web"] == ["web_fetch", "web_search", "weather_report"]

"""Server and tool name normalisation and collision handling."""

from __future__ import annotations

from llmspace.mcp.naming import build_tool_infos
from llmspace.settings.mcp import normalize_name


def test_names_normalise_runs_of_other_characters_to_one_underscore_and_trim() -> None:
    assert normalize_name("My  GitHub-Server!") == "My_GitHub_Server"
    assert normalize_name("__a__b__") == "a_b"
    assert normalize_name("a.b.c") == "a_b_c"
    assert normalize_name("!!!") == ""


def test_tools_get_direct_names_and_schema_summaries() -> None:
    [info] = build_tool_infos("id1", "files", [("read-file", "Read", {"type": "object", "properties": {"path": {}}, "required": ["path"]})])
    assert info.directName == "mcp__files__read_file"
    assert (info.available, info.required, info.properties) == (True, ["path"], ["path"])


def test_colliding_and_empty_names_are_listed_but_unavailable_whatever_the_order() -> None:
    tools = [("a.b", None, {}), ("ok", None, {}), ("a-b", None, {}), ("???", None, {})]
    for order in (tools, list(reversed(tools))):
        infos = {i.name: i for i in build_tool_infos("id", "s", order)}
        assert infos["ok"].available
        assert not infos["a.b"].available and "'a-b'" in (infos["a.b"].reason or "")
        assert not infos["a-b"].available
        assert not infos["???"].available and "no letters" in (infos["???"].reason or "")

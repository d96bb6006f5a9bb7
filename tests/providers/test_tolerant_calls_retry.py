"""Tolerant tool calls: a call of a tool that was not offered is asked again, constrained to
the offered tools; and `compat.tolerantToolCalls` is an option of any provider (models.json)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot
from llmspace.providers.base import ToolSpec
from llmspace.providers.events import ErrorEvent, Finish, StreamEvent, TextDelta, ToolCallArgsDelta, ToolCallStart
from llmspace.providers.tolerant_calls import call_schema, tolerant_tool_calls
from llmspace.settings.models import ModelSettings
from tests.support.llm_server import LoopbackLLM, Turn

LS = ToolSpec("ls", "List a folder", {"type": "object", "properties": {"path": {"type": "string"}},
                                      "required": ["path"]})
READ = ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
TOOLS = (LS, READ)
INVENTED = '```json\n{\n  "name": "list_files",\n  "arguments": {"path": "."}\n}\n```'


def texts(*chunks: str, finish: str = "stop") -> list[StreamEvent]:
    return [*(TextDelta(c) for c in chunks), Finish(finish)]


def calls(events: list[StreamEvent]) -> list[tuple[str, Any]]:
    names = {e.index: e.name for e in events if isinstance(e, ToolCallStart)}
    args: dict[int, str] = {}
    for e in events:
        if isinstance(e, ToolCallArgsDelta):
            args[e.index] = args.get(e.index, "") + e.text
    return [(names[i], json.loads(args.get(i, "{}"))) for i in sorted(names)]


class Script:
    """A first reply, and the constrained reply the retry gets (the schemas it was asked with)."""

    def __init__(self, first: list[StreamEvent], second: list[StreamEvent]) -> None:
        self.first, self.second = first, second
        self.schemas: list[dict[str, Any]] = []
        self.first_closed = False
        self.first_read = 0

    def first_stream(self) -> Iterator[StreamEvent]:
        try:
            for event in self.first:
                self.first_read += 1
                yield event
        finally:
            self.first_closed = True

    def retry(self, schema: dict[str, Any]) -> Iterator[StreamEvent]:
        self.schemas.append(schema)
        return iter(self.second)


def test_a_call_of_a_tool_not_offered_is_asked_again_constrained_and_becomes_a_call_of_an_offered_tool() -> None:
    chunks = [INVENTED[i:i + 5] for i in range(0, len(INVENTED), 5)]
    script = Script(texts(*chunks), texts('{"name": "ls", ', '"arguments": {"pa', 'th": "."}', "}"))
    out = list(tolerant_tool_calls(script.first_stream(), TOOLS, retry=script.retry))
    assert calls(out) == [("ls", {"path": "."})]
    assert not any(isinstance(e, TextDelta) for e in out)
    assert isinstance(out[-1], Finish) and out[-1].reason == "tool_calls"
    assert script.schemas == [call_schema(TOOLS)]
    # dropped as soon as the name showed it, not read to its end
    assert script.first_closed and script.first_read < len(chunks)
    names = [alt["properties"]["name"]["const"] for alt in script.schemas[0]["anyOf"]]
    assert names == ["ls", "read"]


def test_the_constrained_reply_streams_the_name_first_then_the_arguments_in_pieces() -> None:
    script = Script(texts(INVENTED), texts('{"name": "ls", "arguments": {', '"path": ', '"src"', "}", "\n}"))
    out = list(tolerant_tool_calls(script.first_stream(), TOOLS, retry=script.retry))
    kinds = [type(e).__name__ for e in out]
    assert kinds[0] == "ToolCallStart"
    pieces = [e.text for e in out if isinstance(e, ToolCallArgsDelta)]
    assert len(pieces) >= 2 and json.loads("".join(pieces)) == {"path": "src"}


def test_replies_that_are_not_calls_of_unknown_tools_are_never_asked_again() -> None:
    for first in (texts("Hello! How can I help?"), texts('{"name": "ls", "arguments": {"path": "."}}'),
                  texts('{"name": "Ada", "age": 36}'), texts('```python\nprint("hi")\n```'),
                  texts('{{"name": "greet", "arguments": {"message": "Hello!"}}}')):
        script = Script(first, texts("unused"))
        out = list(tolerant_tool_calls(script.first_stream(), TOOLS, retry=script.retry))
        assert script.schemas == [], first
        assert "unused" not in json.dumps([getattr(e, "text", "") for e in out])


def test_a_failed_retry_keeps_what_the_model_wrote_and_says_why() -> None:
    script = Script(texts(INVENTED), [ErrorEvent("HTTP 400: response_format is not supported")])
    out = list(tolerant_tool_calls(script.first_stream(), TOOLS, retry=script.retry))
    assert out[0] == TextDelta(INVENTED)
    assert isinstance(out[-1], ErrorEvent) and "response_format" in out[-1].message


def write_models(home: Path, entry: dict[str, Any]) -> None:
    settings = home / "settings" / "models.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"providers": [entry]}), encoding="utf-8")


def provider_entry(srv: LoopbackLLM, **extra: Any) -> dict[str, Any]:
    return {"id": "loop", "name": "Loop", "api": "openai-completions", "baseUrl": srv.base_url,
            "models": [{"id": "loopback-model"}], **extra}


def react_run(app: Any, home: Path, srv: LoopbackLLM, compat: dict[str, Any] | None) -> tuple[Any, list[dict[str, Any]]]:
    """A ReAct run of a thread offering `ls` and `read` against the loopback provider, whose
    models.json entry has `compat`; returns the run's result and the thread's messages."""
    from llmspace.agent.run_types import RunOptions
    from llmspace.tools.builtins import builtin_tool
    from tests.agent.conftest import make_thread, save_thread, user
    from tests.support.llm_server import configure_provider

    path = configure_provider(home, srv)
    if compat is not None:
        data = json.loads(path.read_text("utf-8"))
        data["providers"][0]["compat"] = compat
        path.write_text(json.dumps(data), "utf-8")
    app.models.reload()
    tools = [t.model_dump(exclude_unset=True) for t in (builtin_tool("ls"), builtin_tool("read")) if t is not None]
    thread = make_thread([user("List the files in my working directory.")], context={"tools": tools})
    save_thread(app, "t.json", thread)
    result = app.runner.run(thread, RunOptions(react=True, max_turns=2))
    assert thread.context is not None
    return result, [m.model_dump(exclude_unset=True) for m in thread.context.messages or []]


def test_an_openai_compatible_provider_with_the_compat_option_runs_a_call_written_as_text(
        app: Any, home: Path, srv: LoopbackLLM, tmp_path: Path) -> None:
    invented = json.dumps({"name": "list_files", "arguments": {"path": str(tmp_path)}})
    (tmp_path / "README.md").write_text("# demo\n")
    srv.push(Turn(text=invented),
             Turn(text=json.dumps({"name": "ls", "arguments": {"description": "list", "path": str(tmp_path)}})),
             Turn(text="There is a README."))
    result, messages = react_run(app, home, srv, {"tolerantToolCalls": True})
    assert result.status == "completed", result.error
    calls = [c for m in messages for c in m.get("toolCalls") or []]
    assert [c["input"]["name"] for c in calls] == ["ls"]
    assert "README.md" in json.dumps(calls)  # the tool ran
    first, second = (r.body_json for r in srv.requests[:2])
    assert "response_format" not in first
    schema = second["response_format"]["json_schema"]["schema"]
    assert [a["properties"]["name"]["const"] for a in schema["anyOf"]] == ["ls", "read"]
    assert second["messages"] == first["messages"] and second["tools"] == first["tools"]


def test_without_the_option_an_openai_compatible_providers_json_reply_stays_text(
        app: Any, home: Path, srv: LoopbackLLM, tmp_path: Path) -> None:
    reply = json.dumps({"name": "ls", "arguments": {"description": "list", "path": str(tmp_path)}})
    srv.push(Turn(text=reply))
    result, messages = react_run(app, home, srv, None)
    assert result.status == "completed", result.error
    assert not [c for m in messages for c in m.get("toolCalls") or []]
    assert messages[-1]["content"][0]["text"] == reply
    assert len(srv.requests) == 1


def tolerant(home: Path, provider_id: str) -> bool:
    view = ModelSettings(DataRoot(home)).provider(provider_id)
    assert view is not None
    return view.tolerant_tool_calls


def test_the_built_in_local_provider_has_the_option_on_unless_its_entry_turns_it_off(home: Path) -> None:
    assert tolerant(home, "local") is True
    assert tolerant(home, "ollama") is False
    write_models(home, {"id": "local", "compat": {"tolerantToolCalls": False}})
    assert tolerant(home, "local") is False


def test_a_compat_option_of_the_wrong_type_is_refused_with_its_path(home: Path, srv: LoopbackLLM) -> None:
    write_models(home, provider_entry(srv, compat={"tolerantToolCalls": "yes"}))
    error = ModelSettings(DataRoot(home)).load_error
    assert isinstance(error, UserFacingError)
    assert "providers[0].compat.tolerantToolCalls must be true or false, not text" in error.message


def test_editing_a_provider_in_settings_keeps_its_compat_option(home: Path, srv: LoopbackLLM) -> None:
    write_models(home, provider_entry(srv, compat={"tolerantToolCalls": True}))
    settings = ModelSettings(DataRoot(home))
    settings.set_provider({"id": "loop", "name": "Renamed", "baseUrl": srv.base_url, "api": "openai-completions",
                           "models": [{"id": "loopback-model"}]})
    assert tolerant(home, "loop") is True

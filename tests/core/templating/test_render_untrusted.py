"""Only text a person wrote is evaluated: the system prompt, user messages and results of
`function` tools. Assistant replies and results of built-in, MCP, plugin or unknown tools are
sent literally, so they can never make rendering read or probe a local file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from llmspace.core.model import PromptSnapshot
from llmspace.core.templating.render import render_thread
from llmspace.core.templating.resolution import RenderEnv
from llmspace.core.threadio import thread_from_data

SECRET = "SECRET-7d1f0c9e"


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET, encoding="utf-8")
    return path


def _thread(text: str, tool: dict[str, Any] | None, *, call_name: str = "t") -> Any:
    ctx: dict[str, Any] = {
        "variables": {"doc": {"type": "file", "value": "SECRET_PATH"}},
        "variableVariants": {"active": "default", "variants": {"default": {"who": "Ada"}}},
        "messages": [
            {"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": text}],
             "toolCalls": [{"id": "c1", "input": {"name": call_name, "arguments": {}},
                            "output": {"content": [{"type": "text", "text": text}]}}]},
        ],
    }
    if tool is not None:
        ctx["tools"] = [tool]
    return thread_from_data({"title": "t", "context": ctx})


ATTACKS = [
    "{{@include('SECRET_PATH')}}",
    "{% if exists('SECRET_PATH') %}present{% else %}absent{% endif %}",
    "{{ exists('SECRET_PATH') }}",
    "{{ doc }}",  # a file variable on the simple path
    "{{ who }} {{ doc | upper }}",
]


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("tool", [
    {"type": "builtin", "name": "t"},
    {"type": "mcp", "name": "t", "serverId": "s", "toolName": "t"},
    None,  # a tool the thread does not define (e.g. a plugin tool, or one removed since)
])
def test_model_and_executed_tool_output_is_sent_literally(secret_file: Path, attack: str, tool: Any) -> None:
    text = attack.replace("SECRET_PATH", str(secret_file))
    t = _thread(text, tool)
    t.context.variables["doc"].value = str(secret_file)

    out = render_thread(t, RenderEnv())

    assert out.message_texts["a1"] == [text]
    assert out.tool_result_texts[("a1", "c1")] == [text]
    assert out.snapshot is None and out.warnings == []
    model_view = out.apply(t)
    assert SECRET not in model_view.model_dump_json()


def test_results_of_function_tools_are_rendered_as_a_person_wrote_them(secret_file: Path) -> None:
    text = f"{{{{@include('{secret_file}')}}}} {{{{ who }}}}"
    t = _thread(text, {"type": "function", "name": "t"})

    out = render_thread(t, RenderEnv())

    assert out.tool_result_texts[("a1", "c1")] == [f"{SECRET} Ada"]
    assert out.message_texts["a1"] == [text]  # the assistant's own text stays literal


def test_a_tool_named_like_a_function_tool_only_counts_when_the_call_uses_that_name(secret_file: Path) -> None:
    text = f"{{{{@include('{secret_file}')}}}}"
    t = _thread(text, {"type": "function", "name": "other"})
    assert render_thread(t, RenderEnv()).tool_result_texts[("a1", "c1")] == [text]


def test_exists_in_untrusted_text_never_probes_the_file(tmp_path: Path) -> None:
    target = tmp_path / "probe.txt"
    target.write_text("x", encoding="utf-8")
    text = f"{{{{ exists('{target}') }}}}"
    t = _thread(text, {"type": "builtin", "name": "t"})
    out = render_thread(t, RenderEnv())
    assert out.message_texts["a1"] == [text] and out.tool_result_texts[("a1", "c1")] == [text]
    # The trusted places still probe (control): the user message renders `true`.
    t.messages[0].content[0].text = text
    assert render_thread(t, RenderEnv()).message_texts["u1"] == ["true"]


def test_frozen_values_of_untrusted_places_are_not_used_or_kept() -> None:
    t = _thread("{{ who }}", {"type": "builtin", "name": "t"})
    t.context.snapshot = PromptSnapshot(variables={"message:a1:text": {"who": SECRET}, "toolResult:a1:c1:text": {"\u0000rendered": SECRET}})
    out = render_thread(t, RenderEnv())
    assert out.message_texts["a1"] == ["{{ who }}"]
    assert out.tool_result_texts[("a1", "c1")] == ["{{ who }}"]
    assert out.snapshot is None

"""Example threads written by this project: the first-start seeds and "New from Examples…".

`catalogue()` lists the examples (id, label, file stem, builder); `seed_threads()` gives the
four threads the workspace seeds on first start (`Workspace.seed_examples`): a general agent
with built-in tools, a prompt with variables, a custom function tool demo and a thread with
one recorded run. Every call builds fresh threads with fresh message ids.

Pure: no I/O.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .model import Thread
from .threadio import thread_from_data


def _id() -> str:
    return str(uuid.uuid4())


def _text(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def _user(text: str) -> dict[str, Any]:
    return {"id": _id(), "role": "user", "content": _text(text)}


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


_DESC = {"type": "string", "description": "Must be the first parameter: a short human-readable summary of what this call does."}


def _builtin(name: str, icon: str, description: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "builtin", "name": name, "icon": icon, "strict": True, "description": description,
            "parameters": _obj(props, required)}


def _agent_tools() -> list[dict[str, Any]]:
    s = {"type": "string"}
    return [
        _builtin("read", "file-text", "Read a text file. Output lines are numbered (line<TAB>text).",
                 {"description": _DESC, "path": s, "offset": {"type": "integer"}, "limit": {"type": "integer"}},
                 ["description", "path"]),
        _builtin("write", "file-pen", "Create or overwrite a file with the given contents.",
                 {"description": _DESC, "path": s, "contents": s}, ["description", "path", "contents"]),
        _builtin("edit", "pencil", "Replace an exact string in a file.",
                 {"description": _DESC, "path": s, "old_string": s, "new_string": s, "replace_all": {"type": "boolean"}},
                 ["description", "path", "old_string", "new_string"]),
        _builtin("ls", "folder", "List a folder, newest first.", {"description": _DESC, "path": s}, ["description", "path"]),
        _builtin("grep", "search", "Search file contents with a regular expression.",
                 {"description": _DESC, "pattern": s, "path": s, "glob": s}, ["description", "pattern", "path"]),
        _builtin("bash", "terminal", "Run a shell command and return stdout, stderr and the exit code.",
                 {"description": _DESC, "command": s, "timeout": {"type": "integer"}}, ["description", "command"]),
        _builtin("web_search", "globe", "Search the web and return the top results.",
                 {"description": _DESC, "query": s}, ["description", "query"]),
        _builtin("web_fetch", "download", "Fetch a web page and return it as Markdown.",
                 {"description": _DESC, "url": s}, ["description", "url"]),
        _builtin("todo_write", "list-checks", "Write the current to-do list (pending, in_progress, completed, cancelled).",
                 {"todos": {"type": "array", "items": _obj({"content": s, "status": {"type": "string", "enum": [
                     "pending", "in_progress", "completed", "cancelled"]}}, ["content", "status"])}}, ["todos"]),
    ]


_AGENT_PROMPT = """You are a careful general-purpose agent working on the user's computer.

Today is {{current_date}}. Your working directory is {{current_working_directory}}.

## How you work
- Understand the request first; ask one short question when something essential is missing.
- Plan multi-step work with `todo_write` and keep the list current.
- Prefer reading files over guessing; quote paths exactly.
- Before changing anything, say what you will change. Never run destructive commands.
- Finish with a short summary of what you did and what is left.

## Skills you may use
{{available_skills}}"""


def general_agent() -> Thread:
    """A general agent with built-in file, shell and web tools."""
    return thread_from_data({
        "title": "General Agent",
        "context": {
            "systemPrompt": _AGENT_PROMPT,
            "tools": _agent_tools(),
            "variables": {
                "current_date": {"type": "currentDate", "format": "readable-date"},
                "available_skills": {"type": "skills", "skillNames": [], "format": "markdown-list", "indent": 0},
                "current_working_directory": {"type": "workingDirectory", "value": "~/Desktop/llm-space-project"},
            },
            "messages": [_user("List the files in my working directory and tell me what this project is about.")],
        },
    })


_VARIABLES_PROMPT = """You write customer replies for {{company}}.

Tone: {{tone}}. Keep answers under {{max_words}} words. Sign as "The {{company}} team".
Today is {{current_date}}; mention dates relative to it when useful."""


def prompt_with_variables() -> Thread:
    """A prompt whose system prompt and message use custom and built-in variables."""
    return thread_from_data({
        "title": "Prompt with Variables",
        "context": {
            "systemPrompt": _VARIABLES_PROMPT,
            "variables": {"current_date": {"type": "currentDate", "format": "iso-date"}},
            "variableVariants": {"active": "default", "variants": {"default": {
                "company": "Northwind Bikes", "tone": "warm and precise", "max_words": "120",
                "customer_message": "My order #4821 arrived with a bent front wheel. What now?",
            }}},
            "messages": [_user("Reply to this customer message:\n\n{{customer_message}}")],
        },
    })


def custom_function_tool() -> Thread:
    """A custom function tool whose result was typed by hand, and the model's answer."""
    call_id = "call_" + uuid.uuid4().hex[:12]
    return thread_from_data({
        "title": "Custom Function Tool",
        "context": {
            "systemPrompt": "You help travellers pack. Call check_forecast before advising on clothes.",
            "tools": [{
                "type": "function", "name": "check_forecast",
                "description": "Forecast for a city over the next days. The result is typed by a person.",
                "parameters": {"type": "object", "properties": {
                    "city": {"type": "string", "description": "City name, e.g. Lisbon"},
                    "days": {"type": "integer", "minimum": 1, "maximum": 7}}, "required": ["city"]},
            }],
            "messages": [
                _user("I'm off to Lisbon for three days. What should I pack?"),
                {"id": _id(), "role": "assistant", "content": _text(""),
                 "toolCalls": [{"id": call_id, "input": {"name": "check_forecast", "arguments": {"city": "Lisbon", "days": 3}},
                                "output": {"content": _text("Fri 21°C sunny; Sat 17°C showers; Sun 19°C windy")}}]},
                {"id": _id(), "role": "assistant", "content": _text(
                    "Pack light layers: T-shirts for a sunny 21°C Friday, a waterproof jacket for Saturday's "
                    "showers and a windbreaker or sweater for Sunday. Comfortable shoes with grip help on "
                    "Lisbon's hills and wet cobblestones.")},
            ],
        },
    })


def recorded_run() -> Thread:
    """A thread with one recorded run in its run history."""
    model = {"provider": "openai", "id": "gpt-4.1-mini", "params": {"temperature": 0.2}}
    usage = {"input": 58, "output": 41, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 99,
             "cost": {"input": 0.0000232, "output": 0.0000656, "cacheRead": 0, "cacheWrite": 0, "total": 0.0000888}}
    system = "Answer in one sentence, then give one example."
    question = _user("What is a haiku?")
    answer = {"id": _id(), "role": "assistant", "content": _text(
        "A haiku is a three-line Japanese poem of 5, 7 and 5 syllables that captures a moment in nature. "
        "Example: \"An old silent pond / a frog jumps into the pond — / splash! Silence again.\""),
        "usage": usage, "timing": {"firstTokenMs": 412, "durationMs": 1380}}
    context = {"systemPrompt": system, "messages": [question, answer]}
    return thread_from_data({
        "title": "Recorded Run",
        "model": model,
        "context": context,
        "runHistory": [{"id": _id(), "timestamp": 1767225600000, "usage": usage,
                        "thread": {"title": "Recorded Run", "model": model, "context": context}}],
    })


@dataclass(frozen=True)
class Example:
    id: str
    label: str
    file_stem: str
    build: Callable[[], Thread]


def catalogue() -> list[Example]:
    """The examples offered by "New from Examples…", in menu order."""
    return [
        Example("general-agent", "General Agent", "general-agent", general_agent),
        Example("prompt-with-variables", "Prompt with Variables", "prompt-with-variables", prompt_with_variables),
        Example("custom-function-tool", "Custom Function Tool", "custom-function-tool", custom_function_tool),
        Example("recorded-run", "Recorded Run", "recorded-run", recorded_run),
    ]


def seed_threads() -> list[tuple[str, Thread]]:
    """(file stem, thread) for each thread seeded on first start."""
    return [(e.file_stem, e.build()) for e in catalogue()]

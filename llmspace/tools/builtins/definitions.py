"""The definitions (name, description, JSON Schema) of the 16 built-in tools, in the
order the original LLM Space app lists them, and their UI groups (fileSystem / web / misc).

Pure data; `tools/builtins/__init__.py` turns these into `Tool` models. Every schema is
`strict` with `additionalProperties: false`; most tools take a leading `description`
parameter that the implementation ignores (a short summary shown to the human).
"""

from __future__ import annotations

from typing import Any

_DESC = {
    "type": "string",
    "description": "Must be the first parameter. A short human-readable summary (5-10 words) of what this call does, shown to the user.",
}


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _with_desc(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return _obj({"description": _DESC, **properties}, ["description", *required])


_S = {"type": "string"}

DEFINITIONS: list[dict[str, Any]] = [
    {
        "name": "web_fetch",
        "icon": "globe",
        "description": "Fetch a web page and return its main content as Markdown (with the page title and metadata when available). Long pages are truncated.",
        "parameters": _obj({"url": {"type": "string", "description": "The absolute http(s) URL to fetch."}}, ["url"]),
    },
    {
        "name": "web_search",
        "icon": "search",
        "description": "Search the web. Returns a JSON array of results with title, url, snippet and (optionally) page content.",
        "parameters": _obj(
            {
                "query": {"type": "string", "description": "The search query."},
                "limit": {"type": "integer", "description": "Maximum number of results (default 5)."},
                "includeContent": {"type": "boolean", "description": "Include page content for each result (default false)."},
            },
            ["query"],
        ),
    },
    {
        "name": "weather_report",
        "icon": "cloud-sun",
        "description": "Get today's weather for a location: a short description and the maximum and minimum temperature in Celsius.",
        "parameters": _obj({"location": {"type": "string", "description": "City or place name, e.g. \"Paris\" or \"New York\"."}}, ["location"]),
    },
    {
        "name": "read",
        "icon": "file-text",
        "description": "Read a text file. Each output line is prefixed with its line number and a tab. Output is capped at 256 KiB; use offset and limit to read a range of lines. Relative paths are resolved against the working directory.",
        "parameters": _with_desc(
            {
                "path": {"type": "string", "description": "Path of the file to read."},
                "offset": {"type": "integer", "description": "1-based line number to start reading from."},
                "limit": {"type": "integer", "description": "Maximum number of lines to read."},
            },
            ["path"],
        ),
    },
    {
        "name": "write",
        "icon": "file-pen",
        "description": "Write a file, creating parent folders and replacing any existing content.",
        "parameters": _with_desc(
            {"path": {"type": "string", "description": "Path of the file to write."}, "contents": {"type": "string", "description": "The full new content of the file."}},
            ["path", "contents"],
        ),
    },
    {
        "name": "skill",
        "icon": "sparkles",
        "description": "Load an enabled Agent Skill by name: returns its base directory and its SKILL.md instructions.",
        "parameters": _obj({"name": {"type": "string", "description": "The skill name, as listed in the available skills."}}, ["name"]),
    },
    {
        "name": "edit",
        "icon": "pencil",
        "description": "Replace an exact string in a file. old_string must match exactly once unless replace_all is true.",
        "parameters": _with_desc(
            {
                "path": {"type": "string", "description": "Path of the file to edit."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The replacement text (may be empty)."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
            },
            ["path", "old_string", "new_string"],
        ),
    },
    {
        "name": "ls",
        "icon": "folder",
        "description": "List a directory: folders end with /, newest first. Noise folders such as node_modules and .git are skipped.",
        "parameters": _with_desc({"path": {"type": "string", "description": "The directory to list."}}, ["path"]),
    },
    {
        "name": "tree",
        "icon": "folder-tree",
        "description": "Show a directory tree (folders first). Noise folders such as node_modules and .git are skipped.",
        "parameters": _with_desc(
            {
                "path": {"type": "string", "description": "The root directory."},
                "max_depth": {"type": "integer", "description": "Maximum depth (default 5, at most 20)."},
            },
            ["path"],
        ),
    },
    {
        "name": "grep",
        "icon": "text-search",
        "description": "Search file contents with a regular expression (ripgrep syntax). Returns matching lines as path:line:text.",
        "parameters": _with_desc(
            {
                "pattern": {"type": "string", "description": "The regular expression to search for."},
                "path": {"type": "string", "description": "File or directory to search."},
                "glob": {"type": "string", "description": "Only search files matching this glob, e.g. \"*.py\"."},
                "case_insensitive": {"type": "boolean", "description": "Ignore case (default false)."},
                "context_lines": {"type": "integer", "description": "Lines of context around each match."},
            },
            ["pattern", "path"],
        ),
    },
    {
        "name": "glob",
        "icon": "files",
        "description": "Find files by glob pattern (e.g. \"**/*.py\"). Returns absolute paths, newest first.",
        "parameters": _with_desc(
            {
                "glob_pattern": {"type": "string", "description": "The glob pattern."},
                "target_directory": {"type": "string", "description": "Directory to search (default: the working directory)."},
            },
            ["glob_pattern"],
        ),
    },
    {
        "name": "bash",
        "icon": "terminal",
        "description": "Run a command with bash -c in a fresh shell in the working directory. Returns JSON with stdout, stderr and exitCode.",
        "parameters": _with_desc(
            {
                "command": {"type": "string", "description": "The command to run."},
                "timeout": {"type": "integer", "description": "Timeout in milliseconds (default 120000, at most 600000)."},
            },
            ["command"],
        ),
    },
    {
        "name": "present_files",
        "icon": "presentation",
        "description": "Show files to the user: HTML files open in the default browser, other files are revealed in the file manager.",
        "parameters": _with_desc(
            {"paths": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Paths of the files to present."}},
            ["paths"],
        ),
    },
    {
        "name": "todo_write",
        "icon": "list-todo",
        "description": "Write the current task list (replaces the previous one). Use it to plan and track multi-step work.",
        "parameters": _obj(
            {
                "todos": {
                    "type": "array",
                    "items": _obj(
                        {
                            "content": {"type": "string", "description": "The task."},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "cancelled"]},
                        },
                        ["content", "status"],
                    ),
                }
            },
            ["todos"],
        ),
    },
    {
        "name": "sleep",
        "icon": "timer",
        "description": "Wait for a number of milliseconds.",
        "parameters": _with_desc({"duration_ms": {"type": "number", "description": "How long to wait, in milliseconds."}}, ["duration_ms"]),
    },
    {
        "name": "ask_user_question",
        "icon": "message-circle-question",
        "terminate": True,
        "description": "Ask the user 1-4 multiple-choice questions and stop until they answer.",
        "parameters": _obj(
            {
                "questions": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 4,
                    "items": _obj(
                        {
                            "question": {"type": "string", "description": "The full question."},
                            "header": {"type": "string", "maxLength": 12, "description": "A very short label (at most 12 characters)."},
                            "options": {
                                "type": "array",
                                "minItems": 2,
                                "maxItems": 4,
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "label": {"type": "string"},
                                        "description": {"type": "string"},
                                        "preview": {"type": "string"},
                                    },
                                    "required": ["label", "description"],
                                    "additionalProperties": False,
                                },
                            },
                            "multi_select": {"type": "boolean", "description": "Allow several answers."},
                        },
                        ["question", "header", "options", "multi_select"],
                    ),
                }
            },
            ["questions"],
        ),
    },
]

GROUPS: dict[str, list[str]] = {
    "fileSystem": ["read", "write", "skill", "edit", "ls", "tree", "grep", "glob", "bash", "present_files"],
    "web": ["web_fetch", "web_search", "weather_report"],
    "misc": ["todo_write", "sleep", "ask_user_question"],
}

"""Source texts of plugin code files for the code-extension tests, a builder that puts
them in a real plugin folder of a temporary LLM_SPACE_HOME, and calls of a plugin tool through
the app's tool router (`call_tool` on a thread of `tool_thread`, or both at once)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llmspace.agent.services import tool_context
from llmspace.app import App
from llmspace.cancel import CancelToken
from llmspace.core.model import Thread, ThreadContext, ToolCall, ToolCallInput, ToolCallOutput
from llmspace.core.threadio import thread_from_data
from llmspace.plugins.code.calls import plugin_tool_entry_for

from .builders import make_plugin

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"greeting": {"type": "string", "default": "Hello"}}}

ECHO_TOOL = '''
class Echo:
    name = "echo_args"
    description = "Echo the arguments and what the context holds."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}},
                  "required": ["text"], "additionalProperties": False}
    strict = True

    def execute(self, context, args):
        return {"text": args["text"], "title": context.thread.get("title"),
                "cwd": context.variables.get("current_working_directory"),
                "greeting": context.settings.get("greeting")}
'''

TEXT_TOOL = '''
class Plain:
    name = "plain_text"
    description = "Return a string."
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, context, args):
        return "just text"
'''

IMAGE_TOOL = '''
import base64

class Picture:
    name = "picture"
    description = "Text and an image."
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, context, args):
        data = base64.b64encode(b"\\x89PNG\\r\\n\\x1a\\n" + b"x" * 2000).decode()
        return context.create_result([{"type": "text", "text": "A picture."},
                                      {"type": "image", "mimeType": "image/png", "data": data}])
'''

RAISING_TOOL = '''
class Failing:
    name = "failing"
    description = "Raises."
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, context, args):
        raise ValueError("the backend said no")
'''

NON_JSON_TOOL = '''
class Odd:
    name = "odd"
    description = "Returns a set."
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, context, args):
        return {1, 2}
'''

PRINTING_TOOL = '''
import os, sys

class Chatty:
    name = "chatty"
    description = "Prints to stdout."
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, context, args):
        print("hello from print")
        os.write(1, b"raw bytes on fd 1\\n")
        sys.stdout.flush()
        return "printed"
'''

EXITING_TOOL = '''
import os

class Exiting:
    name = "exiting"
    description = "Ends its process mid-call unless told not to."
    parameters = {"type": "object", "properties": {"die": {"type": "boolean"}}, "additionalProperties": False}

    def execute(self, context, args):
        if args.get("die"):
            os._exit(3)
        return "alive"
'''

HANGING_TOOL = '''
import threading, time

class Hanging:
    name = "hanging"
    description = "Waits: on its signal (polite) or ignoring it."
    parameters = {"type": "object", "properties": {"polite": {"type": "boolean"}}, "additionalProperties": False}

    def execute(self, context, args):
        if args.get("polite"):
            context.signal.wait(60)
            return "stopped: " + str(context.signal.reason)
        threading.Event().wait(60)
        return "never"
'''

BARRIER_TOOL = '''
import threading

BARRIER = threading.Barrier(6, timeout=30)

class Together:
    name = "together"
    description = "Returns only when six calls run at once on this instance."
    parameters = {"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": False}

    def __init__(self):
        self.lock = threading.Lock()
        self.seen = []

    def execute(self, context, args):
        BARRIER.wait()
        with self.lock:
            self.seen.append(args["n"])
        return {"n": args["n"], "instance": id(self)}
'''

BROKEN_CONSTRUCTOR = '''
class Broken:
    name = "broken"
    description = "Cannot be built."
    parameters = {"type": "object", "properties": {}}

    def __init__(self):
        raise RuntimeError("no token configured")

    def execute(self, context, args):
        return "x"
'''

CONTEXT_TOOL = '''
from llmspace.plugin_api import PluginCallError

class Ctx:
    name = "ctx"
    description = "Uses every context method."
    parameters = {"type": "object", "properties": {"step": {"type": "string"}, "path": {"type": "string"},
                  "content": {"type": "string"}}, "required": ["step"], "additionalProperties": False}

    def execute(self, context, args):
        step = args["step"]
        try:
            if step == "notify":
                return context.notify("Heads up")
            if step == "open_link":
                return context.open_link(args.get("path", "https://example.com/docs"))
            if step == "pick_file":
                return context.pick_file({"title": "Pick"})
            if step == "read":
                return context.read_workspace_file(args["path"])
            if step == "write":
                context.write_workspace_file(args["path"], args["content"])
                return "written"
            if step == "host":
                return context.execute_host_command(args["path"])
            if step == "camel":
                return context.readWorkspaceFile(args["path"])
        except PluginCallError as exc:
            return "refused: " + str(exc)
        return "unknown step"
'''

DISPOSE_TOOL = '''
import os

class Disposing:
    name = "disposing"
    description = "Writes a marker when disposed."
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, context, args):
        return os.getpid()

    def dispose(self):
        with open(os.path.join(os.environ["LLM_SPACE_HOME"], "disposed.txt"), "a") as f:
            f.write("disposed\\n")
'''


def code_plugin(home: Path, name: str = "kit", *, tools: dict[str, str] | None = None,
                commands: dict[str, str] | None = None, storages: dict[str, str] | None = None,
                schema: dict[str, Any] | None = None, engines: str = ">=4.9.0", **extra: Any) -> Path:
    """A plugin folder with the given `tools/<stem>.py`, `commands/<stem>.py` and
    `thread-storages/<stem>.py` sources."""
    files: dict[str, Any] = {}
    for folder, sources in (("tools", tools), ("commands", commands), ("thread-storages", storages)):
        for stem, text in (sources or {}).items():
            files[f"{folder}/{stem}.py"] = text
    if schema is not None:
        files["config.schema.json"] = schema
    files.update(extra.pop("files", {}))
    return make_plugin(home, name, engines=engines, files=files, **extra)


FOLDER_STORAGE = '''
import json, os

class Library:
    display_name = "Folder library"
    description = "Threads in a folder."
    deep_link_id = "folder-lib"
    capabilities = {"read": True, "write": True}

    def _dir(self):
        return os.path.join(os.environ["LLM_SPACE_HOME"], "library")

    def resolve_latest(self, id, context):
        return {"id": id.split("?")[0], "version": "1", "filename": id.split("?")[0].split("/")[-1] + ".json"}

    def read(self, locator, context):
        with open(os.path.join(self._dir(), locator["id"].replace("/", "__") + ".json")) as f:
            return json.load(f)

    def write(self, thread, id, context):
        os.makedirs(self._dir(), exist_ok=True)
        key = id or thread["title"]
        with open(os.path.join(self._dir(), key.replace("/", "__") + ".json"), "w") as f:
            json.dump(thread, f)
        return {"id": key}
'''

LISTING_STORAGE = FOLDER_STORAGE.replace('"Folder library"', '"Listing library"').replace('"folder-lib"', '"list-lib"') + '''
    def list(self, context, options):
        names = sorted(n[:-5].replace("__", "/") for n in os.listdir(self._dir()) if n.endswith(".json"))
        found = [n for n in names if (options["query"] or "") in n]
        start = int(options["cursor"] or 0)
        page = {"items": [{"id": n, "title": n.rsplit("/", 1)[-1].title(), "updatedAt": "2026-12-01"}
                          for n in found[start:start + 2]]}
        if start + 2 < len(found):
            page["nextCursor"] = str(start + 2)
        return page
'''


def tool_thread(app: App) -> Thread:
    """A thread whose context holds every tool of the loaded plugins."""
    app.plugin_code.ensure_loaded()
    thread = thread_from_data({"title": "t"})
    thread.context = ThreadContext(tools=[plugin_tool_entry_for(s) for s in app.plugin_code.tool_specs()])
    return thread


def call_tool(app: App, thread: Thread, name: str, args: dict[str, Any], *, timeout: float = 60.0,
              cancel: CancelToken | None = None, call_id: str = "c") -> ToolCallOutput:
    """Run the thread's tool `name` with `args` as a model's tool call would be run."""
    assert thread.context is not None
    tool = next(t for t in thread.context.tools if t.name == name)
    call = ToolCall(id=call_id, input=ToolCallInput(name=name, arguments=args))
    return app.tools.execute(tool, call, tool_context(app.run_services, thread), cancel, timeout)


def call_plugin_tool(app: App, name: str, args: dict[str, Any]) -> ToolCallOutput:
    """Run a tool of the loaded plugins on a fresh thread that holds them all."""
    return call_tool(app, tool_thread(app), name, args)

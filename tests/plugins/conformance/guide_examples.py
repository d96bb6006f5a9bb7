"""The plugin examples of the conformance suite, each written once per language.

TypeScript/JavaScript: the guide's own sources (/work/shared/spec/plugin-guide.md) AS THE
GUIDE PRINTS THEM, copied verbatim (`GUIDE_*`; test_guide_examples.py checks them against
the guide when it is at hand). Node 20 cannot run `.ts`, so for it `strip_types` erases the
type syntax of those sources into `.mjs` files (the guide's `hello.ts` has none: it becomes
`hello.js` as printed). Python: the same examples with the snake_case API of
docs/plugin-protocol.md ("Python plugin API"). Test-only extras: `echo-args` (a command that
returns its palette arguments as JSON) and `word-count` (a `.mjs` tool, `.py` for the Python
host, that also says which runtime ran it).

    plugin_files("ts")   # {"package.json": …, "commands/hello.ts": …, "tools/word-count.mjs": …, …}
    plugin_files("js")   # the same examples as .js/.mjs (Node 20)
    plugin_files("py")   # the Python versions

The guide's §16 schema only has `audience`; the §10.5 command and the §11 storage read
`context.settings.endpoint`, so the plugin's schema adds §5.1's `endpoint` property to it.
"""

from __future__ import annotations

import json
import re
from typing import Any

PLUGIN = "hello-space"

# §6, Minimal SKILL.md (skills/release-checklist/SKILL.md)
GUIDE_SKILL_MD = r'''---
name: release-checklist
description: Check a release candidate against the team's public checklist.
---

# Release checklist

1. Read `references/checklist.md`.
2. Compare every item with the supplied release notes.
3. Report missing evidence without changing external systems.
'''


# §16, package.json of hello-space
GUIDE_PACKAGE_JSON = r'''{
  "name": "hello-space",
  "version": "1.0.0",
  "displayName": "Hello Space",
  "description": "A minimal LLM Space Plugin example.",
  "engines": {
    "llm-space": ">=4.9.0"
  }
}
'''


# §16, commands/hello.ts
GUIDE_HELLO_TS = r'''export default class HelloCommand {
  displayName = "Say hello";
  description = "Show a local notification.";

  async execute(context) {
    const audience = String(context.settings.audience ?? "LLM Space");
    return context.createResult({
      level: "success",
      message: `Hello, ${audience}!`,
    });
  }
}
'''


# §16, the optional config.schema.json with `audience`
GUIDE_CONFIG_SCHEMA = r'''{
  "type": "object",
  "properties": {
    "audience": {
      "type": "string",
      "title": "Audience",
      "default": "LLM Space"
    }
  }
}
'''


# §9, tools/read-project-file.ts
GUIDE_READ_PROJECT_FILE_TS = r'''import type {
  PluginToolContext,
  PluginToolExtension,
} from "@llm-space/core";

export default class ReadProjectFileTool implements PluginToolExtension {
  name = "read_project_file";
  description = "Read a UTF-8 file from the LLM Space workspace.";
  parameters = {
    type: "object",
    properties: {
      path: {
        type: "string",
        description: "Workspace-relative path, for example docs/plan.md.",
      },
      maxChars: {
        type: "integer",
        minimum: 1,
        maximum: 50000,
        default: 12000,
      },
    },
    required: ["path"],
    additionalProperties: false,
  } as const;
  strict = true;

  async execute(
    context: PluginToolContext,
    args: Record<string, unknown>
  ) {
    const path = String(args.path ?? "");
    const requestedMaxChars = Number(args.maxChars ?? 12000);
    if (!path) throw new Error("path is required.");
    if (!Number.isInteger(requestedMaxChars) || requestedMaxChars < 1) {
      throw new Error("maxChars must be a positive integer.");
    }
    const maxChars = Math.min(requestedMaxChars, 50000);

    const content = await context.readWorkspaceFile(path);
    return {
      path,
      content: content.slice(0, maxChars),
      truncated: content.length > maxChars,
    };
  }
}
'''


# §10, commands/open-documentation.ts
GUIDE_OPEN_DOCUMENTATION_TS = r'''import type {
  PluginCommandContext,
  PluginCommandExtension,
} from "@llm-space/core";

export default class OpenDocumentationCommand
  implements PluginCommandExtension
{
  displayName = "Open example documentation";
  description = "Open the public documentation in the default browser.";

  async execute(context: PluginCommandContext) {
    await context.openLink("https://example.com/docs");
    return context.createResult({
      level: "success",
      message: "Documentation opened.",
    });
  }
}
'''


# §10.5, commands/sync-active-thread.ts
GUIDE_SYNC_ACTIVE_THREAD_TS = r'''import type {
  PluginCommandContext,
  PluginCommandExtension,
  Thread,
} from "@llm-space/core";

export default class SyncActiveThreadCommand
  implements PluginCommandExtension
{
  displayName = "Sync active thread";
  description = "Fetch the canonical title and apply it to the active Thread.";

  async execute(context: PluginCommandContext, args: readonly string[]) {
    const [environment = "production"] = args;
    const endpoint = String(context.settings.endpoint ?? "").replace(/\/$/, "");

    if (!endpoint) {
      return context.createResult({
        level: "warning",
        message: "Configure endpoint in Plugin Settings first.",
      });
    }
    if (!context.activeTab) {
      return context.createResult({
        level: "warning",
        message: "Open a Thread before running this command.",
      });
    }

    await context.report({
      phase: "fetching",
      message: `Fetching ${environment} metadata…`,
    });

    const response = await fetch(
      `${endpoint}/threads/${encodeURIComponent(context.activeTab.filename)}`
    );
    if (!response.ok) {
      throw new Error(`Metadata request failed (${response.status}).`);
    }

    const payload = (await response.json()) as { title?: unknown };
    if (typeof payload.title !== "string" || !payload.title.trim()) {
      return context.createResult({
        level: "error",
        message: "The server response did not contain a valid title.",
      });
    }

    await context.report({ phase: "updating", message: "Updating the Thread…" });
    const nextThread = structuredClone(context.activeTab.thread) as Thread;
    nextThread.title = payload.title.trim();
    await context.activeTab.writeThread(nextThread);

    return context.createResult({
      level: "success",
      message: `Updated ${context.activeTab.filename}.`,
    });
  }
}
'''


# §11, thread-storages/team-library.ts
GUIDE_TEAM_LIBRARY_TS = r'''import type {
  PluginThreadStorage,
  Thread,
  ThreadLocator,
  ThreadStorageContext,
} from "@llm-space/core";

export default class TeamLibraryStorage implements PluginThreadStorage {
  displayName = "Example Team Library";
  description = "Read and write Threads in an example service.";
  deepLinkId = "team-library";
  capabilities = { read: true, write: true };

  async resolveLatest(
    id: string,
    context: ThreadStorageContext
  ): Promise<ThreadLocator> {
    const endpoint = String(context.settings.endpoint ?? "");
    const response = await fetch(
      `${endpoint}/threads/${encodeURIComponent(id)}`
    );
    if (!response.ok) throw new Error(`Request failed (${response.status}).`);
    const data = await response.json();
    return { id, version: data.version, filename: data.filename };
  }

  async read(
    locator: ThreadLocator,
    context: ThreadStorageContext
  ): Promise<Thread> {
    const endpoint = String(context.settings.endpoint ?? "");
    const response = await fetch(
      `${endpoint}/threads/${encodeURIComponent(locator.id)}/content`
    );
    if (!response.ok) throw new Error(`Request failed (${response.status}).`);
    return (await response.json()) as Thread;
  }

  async write(
    thread: Thread,
    id: string | undefined,
    context: ThreadStorageContext
  ): Promise<ThreadLocator> {
    const endpoint = String(context.settings.endpoint ?? "");
    const response = await fetch(
      id
        ? `${endpoint}/threads/${encodeURIComponent(id)}`
        : `${endpoint}/threads`,
      {
        method: id ? "PUT" : "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(thread),
      }
    );
    if (!response.ok) throw new Error(`Request failed (${response.status}).`);
    return (await response.json()) as ThreadLocator;
  }
}
'''


# -- test-only extras (not in the guide) ------------------------------------------------------

ECHO_ARGS_TS = r'''import type { PluginCommandContext } from "@llm-space/core";

export default class EchoArgsCommand {
  displayName = "Echo arguments";
  description = "Test command: returns its palette arguments as JSON.";

  async execute(context: PluginCommandContext, args: readonly string[]) {
    await context.report({ phase: "arguments", message: JSON.stringify(context.arguments) });
    return context.createResult({ level: "success", message: JSON.stringify(args) });
  }
}
'''

WORD_COUNT_MJS = r'''export default class WordCountTool {
  name = "word_count";
  description = "Count the words of a UTF-8 workspace file.";
  parameters = {
    type: "object",
    properties: { path: { type: "string", description: "Workspace-relative path." } },
    required: ["path"],
    additionalProperties: false,
  };

  async execute(context, args) {
    const text = await context.readWorkspaceFile(args.path);
    const runtime = typeof Bun !== "undefined" ? `bun ${Bun.version}` : `node ${process.versions.node}`;
    return { path: args.path, words: text.split(/\s+/).filter(Boolean).length, runtime };
  }
}
'''


# -- the same examples in Python (docs/plugin-protocol.md, "Python plugin API") ----------------

HELLO_PY = '''
class HelloCommand:
    display_name = "Say hello"
    description = "Show a local notification."

    def execute(self, context):
        audience = context.settings.get("audience")
        audience = str("LLM Space" if audience is None else audience)
        return context.create_result({"level": "success", "message": f"Hello, {audience}!"})
'''

READ_PROJECT_FILE_PY = '''
class ReadProjectFileTool:
    name = "read_project_file"
    description = "Read a UTF-8 file from the LLM Space workspace."
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Workspace-relative path, for example docs/plan.md."},
            "maxChars": {"type": "integer", "minimum": 1, "maximum": 50000, "default": 12000},
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    strict = True

    def execute(self, context, args):
        path = str(args.get("path") or "")
        requested = args.get("maxChars", 12000)
        if not path:
            raise ValueError("path is required.")
        if not isinstance(requested, int) or isinstance(requested, bool) or requested < 1:
            raise ValueError("maxChars must be a positive integer.")
        max_chars = min(requested, 50000)
        content = context.read_workspace_file(path)
        return {"path": path, "content": content[:max_chars], "truncated": len(content) > max_chars}
'''

OPEN_DOCUMENTATION_PY = '''
class OpenDocumentationCommand:
    display_name = "Open example documentation"
    description = "Open the public documentation in the default browser."

    def execute(self, context):
        context.open_link("https://example.com/docs")
        return context.create_result({"level": "success", "message": "Documentation opened."})
'''

# encodeURIComponent leaves A-Z a-z 0-9 - _ . ! ~ * ' ( ) as they are; the HTTP helper
# ignores proxy variables like fetch does for loopback addresses.
_HTTP_PY = '''
import json
import urllib.error
import urllib.parse
import urllib.request

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def encode_uri_component(text):
    return urllib.parse.quote(text, safe="!*'()~")


def request_json(url, method="GET", body=None):
    data = None if body is None else json.dumps(body).encode("utf-8")
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with _OPENER.open(req, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, None
'''

SYNC_ACTIVE_THREAD_PY = '''
import copy

from _fetch import encode_uri_component, request_json


class SyncActiveThreadCommand:
    display_name = "Sync active thread"
    description = "Fetch the canonical title and apply it to the active Thread."

    def execute(self, context, args):
        environment = args[0] if args else "production"
        endpoint = str(context.settings.get("endpoint") or "")
        endpoint = endpoint[:-1] if endpoint.endswith("/") else endpoint
        if not endpoint:
            return context.create_result({"level": "warning", "message": "Configure endpoint in Plugin Settings first."})
        if context.active_tab is None:
            return context.create_result({"level": "warning", "message": "Open a Thread before running this command."})

        context.report({"phase": "fetching", "message": f"Fetching {environment} metadata\\u2026"})
        status, payload = request_json(f"{endpoint}/threads/{encode_uri_component(context.active_tab.filename)}")
        if status != 200:
            raise RuntimeError(f"Metadata request failed ({status}).")
        title = payload.get("title") if isinstance(payload, dict) else None
        if not isinstance(title, str) or not title.strip():
            return context.create_result({"level": "error",
                                          "message": "The server response did not contain a valid title."})

        context.report({"phase": "updating", "message": "Updating the Thread\\u2026"})
        next_thread = copy.deepcopy(context.active_tab.thread)
        next_thread["title"] = title.strip()
        context.active_tab.write_thread(next_thread)
        return context.create_result({"level": "success", "message": f"Updated {context.active_tab.filename}."})
'''

TEAM_LIBRARY_PY = '''
from _fetch import encode_uri_component, request_json


class TeamLibraryStorage:
    display_name = "Example Team Library"
    description = "Read and write Threads in an example service."
    deep_link_id = "team-library"
    capabilities = {"read": True, "write": True}

    def resolve_latest(self, id, context):
        endpoint = str(context.settings.get("endpoint") or "")
        status, data = request_json(f"{endpoint}/threads/{encode_uri_component(id)}")
        if status != 200:
            raise RuntimeError(f"Request failed ({status}).")
        return {"id": id, "version": data.get("version"), "filename": data.get("filename")}

    def read(self, locator, context):
        endpoint = str(context.settings.get("endpoint") or "")
        status, data = request_json(f"{endpoint}/threads/{encode_uri_component(locator['id'])}/content")
        if status != 200:
            raise RuntimeError(f"Request failed ({status}).")
        return data

    def write(self, thread, id, context):
        endpoint = str(context.settings.get("endpoint") or "")
        url = f"{endpoint}/threads/{encode_uri_component(id)}" if id else f"{endpoint}/threads"
        status, data = request_json(url, "PUT" if id else "POST", thread)
        if status != 200:
            raise RuntimeError(f"Request failed ({status}).")
        return data
'''

ECHO_ARGS_PY = '''
import json


class EchoArgsCommand:
    display_name = "Echo arguments"
    description = "Test command: returns its palette arguments as JSON."

    def execute(self, context, args):
        context.report({"phase": "arguments", "message": json.dumps(list(context.arguments))})
        return context.create_result({"level": "success", "message": json.dumps(list(args))})
'''

WORD_COUNT_PY = '''
import platform


class WordCountTool:
    name = "word_count"
    description = "Count the words of a UTF-8 workspace file."
    parameters = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "Workspace-relative path."}},
        "required": ["path"],
        "additionalProperties": False,
    }

    def execute(self, context, args):
        text = context.read_workspace_file(args["path"])
        return {"path": args["path"], "words": len(text.split()), "runtime": f"python {platform.python_version()}"}
'''


# -- TypeScript → JavaScript for Node 20 ------------------------------------------------------

_IMPORT_TYPE = re.compile(r'^import type \{[^}]*\} from "[^"]+";\n\n?', re.M)
_IMPLEMENTS = re.compile(r"\s+implements\s+[\w.]+(?:\s*,\s*[\w.]+)*(?=\s*\{)")
_AS = re.compile(r"(?<=[)\]}])\s+as\s+(?:const\b|\{[^{}]*\}|[A-Z]\w*(?:<[^<>]*>)?(?:\[\])?)")
_SIGNATURE = re.compile(r"(\basync\s+\w+\s*|\bfunction\s+\w+\s*)\(([^()]*)\)(\s*:\s*[^{=;]+?)?(\s*\{)")


def _untyped_params(params: str) -> str:
    """`a: T<x, y>, b?: U` → `a, b` (whitespace and line breaks kept)."""
    out, depth, cut = [], 0, False
    for ch in params:
        if ch in "<({[":
            depth += 1
        elif ch in ">)}]":
            depth -= 1
        if depth == 0 and ch == ",":
            cut = False
        elif depth == 0 and ch == ":" and not cut:
            cut = True
            continue
        if not cut:
            out.append(ch)
            continue
        if depth == 0 and ch == "\n":
            out.append(ch)  # a line break ends the annotation: keep the layout
            cut = False
    text = "".join(out)
    return re.sub(r"(\w)\?(?=\s*(?:,|$))", r"\1", text)


def strip_types(source: str) -> str:
    """The JavaScript of one of this module's TypeScript sources: type-only imports,
    `implements` clauses, `as` assertions and parameter/return annotations erased. It
    handles the syntax these examples use, nothing more (Node 20 checks it by running it)."""
    text = _IMPORT_TYPE.sub("", source)
    text = _IMPLEMENTS.sub("", text)
    text = _AS.sub("", text)
    return _SIGNATURE.sub(lambda m: f"{m.group(1)}({_untyped_params(m.group(2))}){m.group(4)}", text)


# -- the plugin folder ------------------------------------------------------------------------

ENDPOINT_PROPERTY: dict[str, Any] = {  # §5.1's example property
    "type": "string",
    "title": "Service endpoint",
    "description": "Base URL of the example service.",
}


def config_schema() -> str:
    schema = json.loads(GUIDE_CONFIG_SCHEMA)
    schema["properties"]["endpoint"] = ENDPOINT_PROPERTY
    return json.dumps(schema, indent=2) + "\n"


GUIDE_TS = {
    "commands/hello.ts": GUIDE_HELLO_TS,
    "tools/read-project-file.ts": GUIDE_READ_PROJECT_FILE_TS,
    "commands/open-documentation.ts": GUIDE_OPEN_DOCUMENTATION_TS,
    "commands/sync-active-thread.ts": GUIDE_SYNC_ACTIVE_THREAD_TS,
    "thread-storages/team-library.ts": GUIDE_TEAM_LIBRARY_TS,
}

PY = {
    "commands/hello.py": HELLO_PY,
    "tools/read-project-file.py": READ_PROJECT_FILE_PY,
    "commands/open-documentation.py": OPEN_DOCUMENTATION_PY,
    "commands/sync-active-thread.py": SYNC_ACTIVE_THREAD_PY,
    "thread-storages/team-library.py": TEAM_LIBRARY_PY,
    "commands/echo-args.py": ECHO_ARGS_PY,
    "tools/word-count.py": WORD_COUNT_PY,
    "commands/_fetch.py": _HTTP_PY,
}

# every code extension of the plugin: (kind, file stem)
EXTENSIONS = [("command", "hello"), ("tool", "read-project-file"), ("command", "open-documentation"),
              ("command", "sync-active-thread"), ("thread-storage", "team-library"), ("command", "echo-args"),
              ("tool", "word-count")]


def plugin_files(lang: str, *, with_test_extras: bool = True) -> dict[str, str]:
    """The files of the `hello-space` plugin made of the guide's examples, with its code in
    `lang`: "ts" (the guide's .ts as printed, the .mjs tool), "js" (Node 20: .js/.mjs) or "py"."""
    files = {"package.json": GUIDE_PACKAGE_JSON, "config.schema.json": config_schema(),
             "skills/release-checklist/SKILL.md": GUIDE_SKILL_MD}
    if lang == "py":
        code = dict(PY)
        if not with_test_extras:
            for rel in ("commands/echo-args.py", "tools/word-count.py"):
                del code[rel]
    elif lang in ("ts", "js"):
        code = dict(GUIDE_TS)
        if with_test_extras:
            code["commands/echo-args.ts"] = ECHO_ARGS_TS
            code["tools/word-count.mjs"] = WORD_COUNT_MJS
        if lang == "js":
            code = {_js_name(rel, text): strip_types(text) for rel, text in code.items()}
    else:
        raise ValueError(f"unknown language {lang!r}")
    files.update(code)
    return files


def _js_name(rel: str, text: str) -> str:
    if not rel.endswith(".ts"):
        return rel
    # a source without type syntax runs as it is printed: as .js (ES module syntax)
    return rel[:-3] + (".js" if strip_types(text) == text else ".mjs")

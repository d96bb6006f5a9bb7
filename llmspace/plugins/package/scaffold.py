'''A new plugin folder to start from: `scaffold_plugin(parent, name, lang="py")`.

    scaffold_plugin(Path("."), "echo-kit")               # → ./echo-kit/ (Python code files)
    scaffold_plugin(Path("."), "@acme/echo-kit")         # → ./@acme/echo-kit/
    scaffold_plugin(Path("."), "echo-kit", lang="ts")    # → ./echo-kit/ (TypeScript code files)

It writes a plugin that passes `plugins check` and discovery as it is:

    package.json          name, version 0.1.0, displayName, description, engines {"llm-space": ">=4.9.0"},
                          llmSpace.capabilities [] (it uses nothing beyond its folders)
    config.schema.json    one string setting, `greeting` (default "Hello")
    tools/echo-text.py    the model-facing tool `echo_text` (restrictive schema, additionalProperties false)
    commands/greet.py     "<Display name> greet": settings, palette arguments, report(), create_result()
    README.md             what the files are and how to try, check, pack and install the plugin
    conftest.py           `pytest_plugins = ["llmspace.plugin_testing"]` (the test harness)
    tests/test_plugin.py  tests of the tool and the command through a real host: `llmspace plugins test .`

With `lang="ts"` the code files are `tools/echo-text.ts` and `commands/greet.ts` instead
(and the tests `tests/plugin.test.ts`, run by `bun test` or `node --test` with
`llmspace/plugin_host/js/testing.mjs` preloaded):
the same tool and command in the guide's style (`export default class … implements …`,
`import type { … } from "@llm-space/core"`), run by the JavaScript host under Bun or
Node 22.6+ (llmspace/plugins/hosts/js_runtime.py); the README says so.

The name must be a valid package name (llmspace/plugins/package/manifest.py); a folder that exists
and is not empty is never touched. The files are written into a hidden staging folder
beside the target and renamed into place, so a failure leaves nothing half-made.
'''

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from ...errors import UserFacingError
from ..errors import PluginError
from .manifest import name_problem

VERSION = "0.1.0"
ENGINES = ">=4.9.0"
LANGUAGES = ("py", "ts")


def display_name_of(name: str) -> str:
    """`@acme/echo-kit` → `Echo Kit`: the package part, words capitalised."""
    words = name.rsplit("/", 1)[-1].replace("_", "-").replace(".", "-").split("-")
    return " ".join(w[:1].upper() + w[1:] for w in words if w) or name


def _package_json(name: str, display: str) -> str:
    data = {
        "name": name,
        "version": VERSION,
        "displayName": display,
        "description": f"{display}: an LLM Space plugin with one tool and one command.",
        "license": "MIT",
        "engines": {"llm-space": ENGINES},
        "llmSpace": {"capabilities": []},  # docs/plugins.md, "Capabilities"
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _schema(display: str) -> str:
    data = {
        "type": "object",
        "description": f"Settings of {display}.",
        "properties": {
            "greeting": {
                "type": "string",
                "title": "Greeting",
                "description": "The word the greet command starts with.",
                "default": "Hello",
            },
        },
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


_TOOL = '''"""The `echo_text` tool: returns the text it is given, optionally upper-cased and repeated.

The file name (echo-text.py) is the stable extension ID
`plugin:{name}:tool:echo-text`; `name` below is what the model calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:  # the contract, for editors and type checkers only
    from llmspace.plugin_api import ToolContext


class EchoTextTool:
    name = "echo_text"
    description = "Echo the given text back, optionally upper-cased and repeated. Use it to test the plugin."
    parameters: ClassVar[dict[str, Any]] = {{
        "type": "object",
        "properties": {{
            "text": {{"type": "string", "minLength": 1, "maxLength": 10000, "description": "The text to echo."}},
            "uppercase": {{"type": "boolean", "description": "Upper-case the text first.", "default": False}},
            "times": {{"type": "integer", "minimum": 1, "maximum": 5, "default": 1,
                       "description": "How many times to repeat it."}},
        }},
        "required": ["text"],
        "additionalProperties": False,
    }}
    strict = True

    def execute(self, context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
        text = args.get("text")
        if not isinstance(text, str) or not text:
            raise ValueError("text must be a non-empty string.")
        times = args.get("times", 1)
        if not isinstance(times, int) or isinstance(times, bool) or not 1 <= times <= 5:
            raise ValueError("times must be an integer from 1 to 5.")
        if args.get("uppercase") is True:
            text = text.upper()
        return {{"text": " ".join([text] * times), "length": len(text)}}
'''

_COMMAND = '''"""The "{display} greet" palette command (alias: greet).

Try it in the palette as `{display} greet Ada Lovelace`, or as `greet 'Ada Lovelace'`;
from the terminal: `llmspace plugins run-command {name} 'greet Ada'`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the contract, for editors and type checkers only
    from llmspace.plugin_api import CommandContext


class GreetCommand:
    display_name = {display_literal}
    description = "Greet someone with the greeting from the plugin settings."

    def execute(self, context: CommandContext, args: tuple[str, ...] = ()) -> Any:
        greeting = str(context.settings.get("greeting") or "Hello").strip()
        audience = " ".join(a.strip() for a in args if a.strip())
        if not audience:
            return context.create_result({{
                "level": "warning",
                "message": "Usage: greet <name…> (for example: greet Ada)",
            }})
        context.report({{"phase": "greeting", "message": f"Greeting {{audience}}…"}})
        return context.create_result({{"level": "success", "message": f"{{greeting}}, {{audience}}!"}})
'''

_CONFTEST = '''"""pytest configuration: the fixtures of `llmspace.plugin_testing` (a real plugin host on
this folder, a recording context, a temporary workspace, a scripted model server)."""

pytest_plugins = ["llmspace.plugin_testing"]
'''

_TESTS = '''"""Tests of this plugin through a real plugin host: `llmspace plugins test .` (or `pytest`)."""


def test_echo_text_repeats_and_upper_cases(plugin):
    assert plugin.tool("echo-text", {"text": "hi", "uppercase": True, "times": 2}) == {"text": "HI HI", "length": 2}


def test_greet_uses_the_greeting_setting_and_reports_progress(plugin):
    plugin.set_settings({"greeting": "Welcome"})
    outcome = plugin.command("greet", ["Ada"])
    assert (outcome.level, outcome.message) == ("success", "Welcome, Ada!")
    assert [r.phase for r in plugin.reports] == ["greeting"]


def test_greet_without_a_name_says_how_to_use_it(plugin):
    outcome = plugin.command("greet")
    assert outcome.level == "warning" and "Usage: greet" in outcome.message
'''

_TESTS_TS = '''// Tests of this plugin through a real plugin host: `llmspace plugins test .` (which preloads
// LLM Space's harness, `globalThis.llmspace`, into `bun test` or `node --test`).
import { after, test } from "node:test";
import assert from "node:assert/strict";

const plugin = await (globalThis as any).llmspace.startPlugin();
after(() => plugin.close());

test("echo-text repeats and upper-cases", async () => {
  assert.deepEqual(await plugin.tool("echo-text", { text: "hi", uppercase: true, times: 2 }), { text: "HI HI", length: 2 });
});

test("greet uses the greeting setting and reports progress", async () => {
  plugin.settings.greeting = "Welcome";
  const outcome = await plugin.command("greet", ["Ada"]);
  assert.deepEqual([outcome.level, outcome.message], ["success", "Welcome, Ada!"]);
  assert.deepEqual(plugin.reports.map((r: { phase: string }) => r.phase), ["greeting"]);
});

test("greet without a name says how to use it", async () => {
  const outcome = await plugin.command("greet");
  assert.equal(outcome.level, "warning");
  assert.match(outcome.message, /Usage: greet/);
});
'''

_README = """# {display}

An LLM Space plugin made from LLM Space's Python plugin template. It contributes:

| File | Extension |
| --- | --- |
| `config.schema.json` | the Settings form: one `greeting` field (default "Hello") |
| `tools/echo-text.py` | the tool `echo_text` (ID `plugin:{name}:tool:echo-text`) |
| `commands/greet.py` | the palette command "{display} greet" (alias `greet`) |

Code files are Python: each file's only class (or its `default` attribute) is the
extension, created once per plugin load with no arguments. Files starting with `_` are
helpers you can import from the others. The API is described in LLM Space's
`docs/plugin-protocol.md` ("Python plugin API").

## Try it

```
llmspace plugins check .                                # the release checklist
llmspace plugins call-tool {name} echo_text '{{"text": "hi", "times": 2}}'
llmspace plugins run-command {name} 'greet Ada'
llmspace plugins settings {name} greeting=Welcome
```

## Install it

```
llmspace plugins pack .            # → ../{zip_name}
llmspace plugins install ../{zip_name}
```

Or copy this folder to `$LLM_SPACE_HOME/plugins/{name}/` (default `~/.llm-space/plugins/`)
and run `llmspace plugins refresh`. After editing the files, run `llmspace plugins reload {name}`.
Keep runtime data in `$LLM_SPACE_HOME/data/plugins/{name}/`, never in this folder.
"""


# The TypeScript templates: @NAME@, @DISPLAY@ and @DISPLAY_LITERAL@ are filled in (braces
# are TypeScript's own here, so str.format is not used).
_TOOL_TS = """/**
 * The `echo_text` tool: returns the text it is given, optionally upper-cased and repeated.
 *
 * The file name (echo-text.ts) is the stable extension ID
 * `plugin:@NAME@:tool:echo-text`; `name` below is what the model calls.
 */
import type { PluginToolContext, PluginToolExtension } from "@llm-space/core";

export default class EchoTextTool implements PluginToolExtension {
  name = "echo_text";
  description = "Echo the given text back, optionally upper-cased and repeated. Use it to test the plugin.";
  parameters = {
    type: "object",
    properties: {
      text: { type: "string", minLength: 1, maxLength: 10000, description: "The text to echo." },
      uppercase: { type: "boolean", description: "Upper-case the text first.", default: false },
      times: { type: "integer", minimum: 1, maximum: 5, default: 1, description: "How many times to repeat it." },
    },
    required: ["text"],
    additionalProperties: false,
  } as const;
  strict = true;

  async execute(context: PluginToolContext, args: Record<string, unknown>) {
    const text = args.text;
    if (typeof text !== "string" || !text) {
      throw new Error("text must be a non-empty string.");
    }
    const times = args.times ?? 1;
    if (typeof times !== "number" || !Number.isInteger(times) || times < 1 || times > 5) {
      throw new Error("times must be an integer from 1 to 5.");
    }
    const shown = args.uppercase === true ? text.toUpperCase() : text;
    return { text: Array.from({ length: times }, () => shown).join(" "), length: shown.length };
  }
}
"""

_COMMAND_TS = """/**
 * The "@DISPLAY@ greet" palette command (alias: greet).
 *
 * Try it in the palette as `@DISPLAY@ greet Ada Lovelace`, or as `greet 'Ada Lovelace'`;
 * from the terminal: `llmspace plugins run-command @NAME@ 'greet Ada'`.
 */
import type { PluginCommandContext, PluginCommandExtension } from "@llm-space/core";

export default class GreetCommand implements PluginCommandExtension {
  displayName = @DISPLAY_LITERAL@;
  description = "Greet someone with the greeting from the plugin settings.";

  async execute(context: PluginCommandContext, args: readonly string[]) {
    const greeting = String(context.settings.greeting || "Hello").trim();
    const audience = args.map((arg) => arg.trim()).filter(Boolean).join(" ");
    if (!audience) {
      return context.createResult({
        level: "warning",
        message: "Usage: greet <name…> (for example: greet Ada)",
      });
    }
    await context.report({ phase: "greeting", message: `Greeting ${audience}…` });
    return context.createResult({ level: "success", message: `${greeting}, ${audience}!` });
  }
}
"""

_README_TS = """# @DISPLAY@

An LLM Space plugin made from LLM Space's TypeScript plugin template. It contributes:

| File | Extension |
| --- | --- |
| `config.schema.json` | the Settings form: one `greeting` field (default "Hello") |
| `tools/echo-text.ts` | the tool `echo_text` (ID `plugin:@NAME@:tool:echo-text`) |
| `commands/greet.ts` | the palette command "@DISPLAY@ greet" (alias `greet`) |

Each code file default-exports a class, created once per plugin load with no arguments.
`import type { … } from "@llm-space/core"` names the plugin API's types; it is erased before
the code runs (a value import from it fails). The files run in LLM Space's JavaScript host
under Bun, or Node.js 22.6 or newer (`.js`/`.mjs` files also run on Node 18+). LLM Space
uses the runtime set with `llmspace plugins runtime PATH`, else `bun`, else `node` on PATH;
`llmspace plugins runtime` shows which one it found.

## Try it

```
llmspace plugins check .                                # the release checklist
llmspace plugins call-tool @NAME@ echo_text '{"text": "hi", "times": 2}'
llmspace plugins run-command @NAME@ 'greet Ada'
llmspace plugins settings @NAME@ greeting=Welcome
```

## Install it

```
llmspace plugins pack .            # → ../@ZIP_NAME@
llmspace plugins install ../@ZIP_NAME@
```

Or copy this folder to `$LLM_SPACE_HOME/plugins/@NAME@/` (default `~/.llm-space/plugins/`)
and run `llmspace plugins refresh`. After editing the files, run `llmspace plugins reload @NAME@`.
Keep runtime data in `$LLM_SPACE_HOME/data/plugins/@NAME@/`, never in this folder. Ship any
dependencies inside the plugin: LLM Space does not run a package manager.
"""


def _fill(template: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        template = template.replace(f"@{key}@", value)
    return template


def _files(name: str, lang: str = "py") -> dict[str, str]:
    display = display_name_of(name)
    zip_name = f"{name.lstrip('@').replace('/', '-')}-{VERSION}.zip"
    display_literal = json.dumps(f"{display} greet")
    files = {
        "package.json": _package_json(name, display),
        "config.schema.json": _schema(display),
    }
    if lang == "ts":
        values = {"NAME": name, "DISPLAY": display, "DISPLAY_LITERAL": display_literal, "ZIP_NAME": zip_name}
        files.update({
            "tests/plugin.test.ts": _TESTS_TS,
            "tools/echo-text.ts": _fill(_TOOL_TS, values),
            "commands/greet.ts": _fill(_COMMAND_TS, values),
            "README.md": _fill(_README_TS, values),
        })
        return files
    files.update({
        "conftest.py": _CONFTEST,
        "tests/test_plugin.py": _TESTS,
        "tools/echo-text.py": _TOOL.format(name=name),
        "commands/greet.py": _COMMAND.format(name=name, display=display, display_literal=display_literal),
        "README.md": _README.format(name=name, display=display, zip_name=zip_name),
    })
    return files


def _check_target(target: Path) -> None:
    if os.path.islink(target):
        raise PluginError(f"{target} is a symbolic link; choose another folder.")
    if target.exists():
        if not target.is_dir():
            raise PluginError(f"{target} already exists and is not a folder.")
        if any(target.iterdir()):
            raise PluginError(f"{target} already exists and is not empty; nothing was written.",
                              hint="Choose another name or parent folder, or empty that folder first.")


def scaffold_plugin(parent: Path, name: str, *, lang: str = "py") -> Path:
    """Create the plugin folder `parent/<name>` (`parent/@scope/<name>` for a scoped name)
    and return it, its code files in `lang` ("py" or "ts"). `PluginError` for an invalid
    name or a folder that is not empty; `UserFacingError` for an unknown language."""
    if lang not in LANGUAGES:
        raise UserFacingError(f"Unknown plugin language {lang!r}.", hint="Use \"py\" (Python) or \"ts\" (TypeScript).")
    problem = name_problem(name)
    if problem is not None:
        raise PluginError(f"{name!r} is not a valid plugin name: {problem}.")
    parent = Path(parent)
    target = parent.joinpath(*name.split("/"))
    _check_target(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".scaffold-", dir=target.parent))
    except OSError as exc:
        raise PluginError(f"Cannot create {target.parent}: {exc.strerror or exc}.") from exc
    try:
        for rel, text in _files(name, lang).items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="\n")
        staging.chmod(0o755)
        if target.exists():
            target.rmdir()  # empty (checked above); a file appearing meanwhile makes this fail safely
        os.rename(staging, target)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise PluginError(f"Cannot create {target}: {exc.strerror or exc}.") from exc
    return target

"""Secret plugin settings (`"format": "password"`, `"writeOnly": true`) never reach a log
in clear: what a plugin prints or writes to stderr (output.log), the error it raises (the
call's error and the traceback logged with it) and the output of a host that crashed (the
crash log), in Python and in JavaScript, from the moment the settings are loaded or changed."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from llmspace.app import App
from llmspace.plugins.hosts.js_runtime import find_runtime
from llmspace.redact import KNOWN

from .builders import make_plugin
from .code_plugins import call_plugin_tool as _call
from .conformance.conftest import BUN_CACHED, absent

SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "token": {"type": "string", "format": "password"},
    "pin": {"type": "string", "writeOnly": True},
    "greeting": {"type": "string", "default": "Hello"}}}

PY_LEAKY = '''
import os, sys

class Leaky:
    name = "leaky"
    description = "Prints, raises or crashes with its secret settings."
    parameters = {"type": "object"}

    def execute(self, context, args):
        token, pin = context.settings["token"], context.settings["pin"]
        how = args.get("how")
        print(f"printing token={token}")
        sys.stderr.write(f"stderr pin={pin}\\n")
        sys.stderr.flush()
        if how == "raise":
            raise ValueError(f"bad token {token} and pin {pin}")
        if how == "crash":
            os._exit(3)
        return "done"
'''

JS_LEAKY = '''
export default class Leaky {
  name = "js_leaky";
  description = "Prints, raises or crashes with its secret settings.";
  parameters = {type: "object"};
  async execute(context, args) {
    const {token, pin} = context.settings;
    console.log(`printing token=${token}`);
    process.stderr.write(`stderr pin=${pin}\\n`);
    if (args.how === "raise") throw new Error(`bad token ${token} and pin ${pin}`);
    if (args.how === "crash") {
      await new Promise((resolve) => setTimeout(resolve, 200));  // lets stderr reach the app
      process.exit(3);
    }
    return "done";
  }
}
'''


def _logs(home: Path, plugin: str) -> str:
    folder = home / "logs" / "plugins" / plugin
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in sorted(folder.glob("*.log*")))


@pytest.mark.parametrize("runtime", ["python", "js"])
def test_secret_settings_printed_raised_or_crashed_with_are_masked_in_every_log(
        app: App, home: Path, runtime: str) -> None:
    if runtime == "js":
        bun = shutil.which("bun") or (str(BUN_CACHED) if BUN_CACHED.exists() else None)
        if bun is None:
            absent("Bun is not installed (.ci/run installs it into .cache/js/bun)")
        found = find_runtime(None, {"PATH": str(Path(str(bun)).parent)})
        app.plugin_code.js_runtime = lambda: found
        files = {"tools/leaky.mjs": JS_LEAKY, "config.schema.json": SCHEMA}
        tool = "js_leaky"
    else:
        files = {"tools/leaky.py": PY_LEAKY, "config.schema.json": SCHEMA}
        tool = "leaky"
    token, pin = f"tok-{runtime}-Zq81Xy", f"pin-{runtime}-77Qa"
    make_plugin(home, "kit", engines=">=4.9.0", files=files)
    app.plugins.refresh()
    app.plugins.update_settings("kit", [("token", token), ("pin", pin)])
    assert _call(app, tool, {}).text() == "done"
    raised = _call(app, tool, {"how": "raise"})
    crashed = _call(app, tool, {"how": "crash"})
    assert raised.isError is True and crashed.isError is True
    logs = _logs(home, "kit")
    assert "printing token=***" in logs and "stderr pin=***" in logs
    assert "bad token *** and pin ***" in logs  # the traceback logged with the failed call
    for text in (raised.text(), crashed.text(), logs):
        assert token not in text and pin not in text

    changed = f"tok-{runtime}-new-Hy21"
    app.plugins.update_settings("kit", [("token", changed)])
    assert _call(app, tool, {}).text() == "done"
    assert changed not in _logs(home, "kit") and KNOWN.text(changed) == "***"

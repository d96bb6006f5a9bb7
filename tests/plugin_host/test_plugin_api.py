"""llmspace.plugin_api: the contract plugin authors import is cheap and stands alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from llmspace.plugin_api import PluginCallError, PluginResult

from .client import REPO, WAIT


def test_importing_plugin_api_imports_nothing_else_of_llmspace_nor_any_third_party_package(tmp_path):
    script = ("import json, sys; before = set(sys.modules); import llmspace.plugin_api; "
              "print(json.dumps(sorted(set(sys.modules) - before)))")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=WAIT, check=True)
    new = json.loads(done.stdout)
    assert [m for m in new if m.startswith("llmspace")] == ["llmspace", "llmspace.plugin_api"]
    stdlib = set(sys.stdlib_module_names)
    assert [m for m in new if not m.startswith("llmspace") and m.split(".")[0].lstrip("_") not in stdlib
            and m.split(".")[0] not in stdlib] == []


def test_plugin_call_error_carries_the_apps_message_and_code():
    error = PluginCallError("The path escapes the workspace.", -32010)
    assert str(error) == error.message == "The path escapes the workspace."
    assert error.code == -32010
    assert PluginCallError("no answer").code is None


def test_a_plugin_result_hands_out_copies_of_its_payload():
    result = PluginResult({"level": "success", "message": "Done."})
    result.payload["level"] = "error"
    assert result.payload == {"level": "success", "message": "Done."}

"""The example sources of the suite: the guide's are the guide's text verbatim, and the
JavaScript made from them for Node 20 has no TypeScript left (Node parses it)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from . import guide_examples as g
from .conftest import find

GUIDE = Path(os.environ.get("LLM_SPACE_PLUGIN_GUIDE", "/work/shared/spec/plugin-guide.md"))
VERBATIM = {name: getattr(g, name) for name in dir(g) if name.startswith("GUIDE_") and isinstance(getattr(g, name), str)}


@pytest.mark.parametrize("name", sorted(VERBATIM))
def test_each_guide_example_is_the_guide_text_verbatim(name: str) -> None:
    if not GUIDE.is_file():
        pytest.skip(f"the plugin guide is not at {GUIDE} (set LLM_SPACE_PLUGIN_GUIDE)")
    assert VERBATIM[name] in GUIDE.read_text(encoding="utf-8") + "\n"


def test_the_typescript_plugin_is_the_guide_files_as_printed() -> None:
    files = g.plugin_files("ts", with_test_extras=False)
    assert {rel: text for rel, text in files.items() if rel.endswith(".ts")} == g.GUIDE_TS
    assert files["package.json"] == g.GUIDE_PACKAGE_JSON
    assert files["skills/release-checklist/SKILL.md"] == g.GUIDE_SKILL_MD


def test_stripping_types_keeps_the_code_and_leaves_strings_alone() -> None:
    js = g.strip_types(g.ECHO_ARGS_TS)
    assert "import type" not in js and "readonly" not in js and "PluginCommandContext" not in js
    assert '"Test command: returns its palette arguments as JSON."' in js  # " as JSON" is not an assertion
    assert g.strip_types(g.GUIDE_HELLO_TS) == g.GUIDE_HELLO_TS
    storage = g.strip_types(g.GUIDE_TEAM_LIBRARY_TS)
    assert "async write(\n    thread,\n    id,\n    context\n  ) {" in storage
    assert "Promise<" not in storage and " as Thread" not in storage and "implements" not in storage


def test_the_javascript_examples_parse_under_node(tmp_path: Path) -> None:
    node = find("node")
    if isinstance(node, str):
        pytest.skip(node)
    for rel, text in g.plugin_files("js").items():
        if rel.endswith((".js", ".mjs")):
            path = tmp_path / (Path(rel).stem + ".mjs")
            path.write_text(text, encoding="utf-8")
            proc = subprocess.run([node.executable, "--check", str(path)], capture_output=True, text=True, timeout=60)
            assert proc.returncode == 0, f"{rel}:\n{proc.stderr}"

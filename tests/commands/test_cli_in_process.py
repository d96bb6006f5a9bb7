"""tests/support/cli.py's `cli_in_process` behaves as the subprocess it replaces: a usage error is
exit 2 with argparse's message, a key one call configured is not a known secret after it, the
`llmspace` logger's level is put back, and a command still running after its timeout raises
`subprocess.TimeoutExpired` (the next call runs normally) instead of hanging the session."""

from __future__ import annotations

import logging
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from llmspace import redact
from llmspace.core.threadio import serialize_thread, thread_from_data
from tests.support.cli import cli_in_process
from tests.support.llm_server import LoopbackLLM, Turn, configure_provider

KEY = "sk-cli-in-process-test-key-5f0c9a7d21"


def _thread(home: Path) -> None:
    (home / "workspace").mkdir(parents=True, exist_ok=True)
    (home / "workspace" / "t.json").write_bytes(serialize_thread(thread_from_data({"title": "t", "context": {
        "messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}]}]}})))


def test_a_usage_error_is_exit_2_with_argparses_message_on_stderr(home: Path) -> None:
    done = cli_in_process(["threads", "no-such-subcommand"], env={"LLM_SPACE_HOME": str(home)})

    assert done.returncode == 2 and "invalid choice: 'no-such-subcommand'" in done.stderr, done


def test_a_key_a_call_configured_is_not_a_known_secret_after_it_and_the_logger_level_is_put_back(home: Path) -> None:
    logger = logging.getLogger("llmspace")
    level = logger.level
    with LoopbackLLM() as srv:
        configure_provider(home, srv, api_key=KEY)
        srv.push(Turn(text="Hello."))
        _thread(home)

        done = cli_in_process(["run", "t.json"], env={"LLM_SPACE_HOME": str(home)})

    assert done.returncode == 0, done.stderr
    assert srv.requests[0].headers.get("Authorization") == f"Bearer {KEY}"
    assert KEY not in redact.KNOWN.redactor.values
    assert logger.level == level


def test_a_command_still_running_after_its_timeout_raises_timeout_expired_and_the_next_call_runs(home: Path) -> None:
    gate = threading.Event()
    with LoopbackLLM() as srv:
        configure_provider(home, srv)
        srv.responder = lambda kind, body: (gate.wait(120), Turn(text="late"))[1]
        _thread(home)
        handler = signal.getsignal(signal.SIGALRM)
        started = time.monotonic()
        try:
            with pytest.raises(subprocess.TimeoutExpired):
                cli_in_process(["run", "t.json"], env={"LLM_SPACE_HOME": str(home)}, timeout=2)
        finally:
            gate.set()
        took = time.monotonic() - started

    assert took < 60, f"interrupted after {took:.0f} s"
    assert signal.getsignal(signal.SIGALRM) == handler
    listed = cli_in_process(["threads", "list"], env={"LLM_SPACE_HOME": str(home)})
    assert listed.returncode == 0 and "t.json" in listed.stdout, listed

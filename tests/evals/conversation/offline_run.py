"""Runs the support-agent example against the scripted loopback models in this process and
prints the result as JSON: `python -m tests.evals.conversation.offline_run HOME`. The offline
test runs it inside a network namespace where only loopback is up (test_offline.py)."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path


def run(home: Path) -> dict[str, object]:
    os.environ["LLM_SPACE_HOME"] = str(home)
    from llmspace.cli import main
    from tests.evals.conversation.scripted import Scripted, setup
    from tests.support.llm_server import LoopbackLLM

    try:
        socket.create_connection(("1.1.1.1", 443), timeout=5).close()
        outside = True
    except OSError:
        outside = False
    scripted = Scripted()
    with LoopbackLLM() as srv:
        srv.responder = scripted
        path = setup(home, srv, repeat=1)
        code = main(["eval", "run", str(path), "--no-cache"])
    (folder,) = sorted((home / "evals" / "support").iterdir())
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text("utf-8").splitlines()]
    return {"code": code, "outside": outside, "statuses": {r["case"]: r["status"] for r in rows}, "calls": dict(scripted.calls)}


if __name__ == "__main__":
    result = run(Path(sys.argv[1]))
    sys.stdout.write("RESULT " + json.dumps(result) + "\n")

"""A configured provider ID (and model ID) never leaves `traces/` when it becomes part of a trace file name."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.paths import DataRoot, safe_component
from llmspace.providers.base import Endpoint, ModelInfo, ModelRequest, NeutralMessage
from llmspace.providers.events import Finish, TextDelta
from llmspace.providers.traces import TraceWriter


@pytest.mark.parametrize(("provider", "model"), [
    ("x/../../../outside/pwned", "m"),
    ("..", "../../etc/passwd"),
    ("a\\b", "C:evil"),
    ("p" * 300, "ü名前/" * 50),
])
def test_a_trace_file_is_one_file_directly_in_traces(home: Path, tmp_path: Path, provider: str, model: str) -> None:
    ep = Endpoint(provider_id=provider, api="openai-completions", base_url="http://127.0.0.1:9/v1")
    info = ModelInfo(id=model, name=model, api="openai-completions")
    request = ModelRequest(endpoint=ep, model=info, system_prompt="", messages=(NeutralMessage(role="user", text="Hi"),))
    before = set(tmp_path.rglob("*"))

    path = TraceWriter(DataRoot(home)).record(request, [TextDelta("ok"), Finish("stop")])

    assert path.parent == home / "traces" / "calls" and path.is_file()
    assert safe_component(provider)[:30] in path.name
    assert len(path.name.encode()) <= 255
    created = set(tmp_path.rglob("*")) - before
    assert sorted(str(p) for p in created if not p.is_relative_to(home / "traces")) == []

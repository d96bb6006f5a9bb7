"""A configured MCP server name never leaves the data root when it becomes a log file name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.cli import main
from llmspace.mcp.hub import McpHub
from llmspace.paths import DataRoot, safe_component

from .conftest import DEMO, PY

CLIMBER = "x/../../../outside/pwned"


def write_servers(home: Path, *servers: dict[str, object]) -> None:
    """Write settings/mcp.json by hand, as a user (or another app) could; `serverName` is not re-checked."""
    (home / "settings").mkdir(parents=True, exist_ok=True)
    (home / "settings" / "mcp.json").write_text(json.dumps({"servers": list(servers)}))


def everything_under(folder: Path) -> set[Path]:
    return set(folder.rglob("*"))


def test_mcp_test_with_a_climbing_server_name_logs_inside_the_logs_folder(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_servers(home, {"id": "s1", "name": CLIMBER, "serverName": CLIMBER, "transport": "stdio",
                         "command": PY, "args": [str(DEMO), "stdio"]})
    before = everything_under(tmp_path)

    code = main(["mcp", "test", CLIMBER])

    out = capsys.readouterr()
    assert code == 0, out.err
    created = everything_under(tmp_path) - before
    outside = sorted(str(p) for p in created if not p.is_relative_to(home))
    assert outside == []
    log = home / "logs" / "mcp-x%2F..%2F..%2F..%2Foutside%2Fpwned.log"
    assert log.is_file() and "starting" in log.read_text()
    assert sorted(p.name for p in (home / "logs").iterdir() if p.name.startswith("mcp-")) == [log.name]


@pytest.mark.parametrize("name", ["..", ".", "a\\b", "../../etc", "C:evil", "/abs/path", "ü名前"])
def test_every_server_name_becomes_one_file_directly_in_the_logs_folder(home: Path, tmp_path: Path, name: str) -> None:
    write_servers(home, {"id": "s1", "name": name, "serverName": name, "transport": "stdio",
                         "command": "llmspace-no-such-command-xyz"})
    before = everything_under(tmp_path)
    hub = McpHub(DataRoot(home))
    try:
        readiness = hub.test(name)
    finally:
        hub.close()
    assert readiness.status == "error"
    created = everything_under(tmp_path) - before
    assert sorted(str(p) for p in created if not p.is_relative_to(home)) == []
    expected = home / "logs" / f"mcp-{safe_component(name)}.log"
    assert expected.is_file()
    assert [p for p in (home / "logs").iterdir() if p.name.startswith("mcp-")] == [expected]

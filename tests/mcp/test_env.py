"""`$VAR` interpolation and the environment given to stdio servers."""

from __future__ import annotations

import os
import sys

import pytest

from llmspace.errors import UserFacingError
from llmspace.mcp import env as mcp_env


def test_dollar_and_braced_references_are_substituted() -> None:
    environ = {"TOKEN": "abc", "HOST": "h"}
    assert mcp_env.interpolate("Bearer $TOKEN", environ) == "Bearer abc"
    assert mcp_env.interpolate("${HOST}:80/${TOKEN}x", environ) == "h:80/abcx"
    assert mcp_env.interpolate("no refs $ here", environ) == "no refs $ here"


def test_an_unset_variable_names_itself() -> None:
    with pytest.raises(UserFacingError) as err:
        mcp_env.interpolate("${MISSING_ONE}", {})
    assert err.value.message == "Environment variable MISSING_ONE is not set."


def test_login_shell_path_comes_first_and_current_entries_are_kept(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    shell = tmp_path / "fake-shell"
    shell.write_text("#!/bin/sh\nprintf %s /opt/login/bin:/usr/bin\n")
    shell.chmod(0o755)
    monkeypatch.setenv("SHELL", str(shell))
    monkeypatch.setenv("PATH", "/usr/bin:/only/current")
    monkeypatch.setattr(mcp_env, "_login_path", None)
    assert mcp_env.login_shell_path() == "/opt/login/bin:/usr/bin:/only/current"
    monkeypatch.setattr(mcp_env, "_login_path", None)


def test_a_broken_login_shell_falls_back_to_the_current_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELL", "/nonexistent/shell")
    monkeypatch.setattr(mcp_env, "_login_path", None)
    assert mcp_env.login_shell_path() == os.environ["PATH"]
    monkeypatch.setattr(mcp_env, "_login_path", None)


def test_frozen_apps_restore_the_original_library_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/tmp/_MEI123")
    monkeypatch.setenv("LD_LIBRARY_PATH_ORIG", "/usr/local/lib")
    env = mcp_env.child_env({"A": "1"})
    assert env["LD_LIBRARY_PATH"] == "/usr/local/lib"
    assert env["A"] == "1" and "PATH" in env

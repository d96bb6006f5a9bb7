"""Links are routed by host: `llm-space://shared/…` to the shared-thread import, wherever a link
is opened through the plugin storages' entry point (the window's hand-off and Open link use it),
and `llm-space://threads/…` still to the storages."""

from __future__ import annotations

import json

import pytest

from llmspace.app import App
from llmspace.errors import UserFacingError
from llmspace.plugins.code.storages import open_deep_link

from .github_server import GitHubServer


def test_the_storages_link_entry_point_opens_a_shared_link_into_shared(app: App, github: GitHubServer) -> None:
    gist_id = github.add_gist({"quiz.json": json.dumps({"title": "quiz", "context": {"messages": []}}).encode()})
    rel = open_deep_link(app.plugin_code, f"llm-space://shared/gist/threads/{gist_id}", app.workspace)
    assert rel == "shared/quiz.json"
    assert app.workspace.open(rel).originalURL == f"llm-space://shared/gist/threads/{gist_id}"


def test_a_threads_link_still_goes_to_the_storages(app: App) -> None:
    with pytest.raises(UserFacingError, match="No enabled thread storage handles 'atlas'"):
        open_deep_link(app.plugin_code, "llm-space://threads/atlas/x", app.workspace)

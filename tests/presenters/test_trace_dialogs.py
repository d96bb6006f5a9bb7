"""The logic of the Traces panel's connect and sync dialogs and of the sharing dialogs, without a
display (llmspace/presenters/trace_connect.py, trace_sync.py, share.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from llmspace.errors import UserFacingError
from llmspace.presenters.share import SharePresenter
from llmspace.presenters.trace_connect import ConnectForm, form_error
from llmspace.presenters.trace_sync import ResultRow, SyncForm, filters_of, sort_rows
from llmspace.traces.remote import RemoteError

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


def test_a_form_without_url_keys_or_project_is_refused_before_anything_is_sent_naming_the_field():
    assert ConnectForm("langfuse", url=" ").problem().fields == ("url",)
    missing = ConnectForm("langfuse", url="https://cloud.langfuse.com", public_key="pk-lf-1").problem()
    assert (missing.what, missing.fields) == ("key", ("secret_key",))
    assert ConnectForm("phoenix", url="http://127.0.0.1:6006", project="").problem().fields == ("project",)
    assert ConnectForm("phoenix", url="http://127.0.0.1:6006").problem() is None  # the API key is optional


@pytest.mark.parametrize(("what", "kind", "fields", "first"), [
    ("key", "langfuse", ("public_key", "secret_key"), "The key is wrong."),
    ("project", "phoenix", ("project",), "The project is wrong."),
    ("url", "phoenix", ("url",), "The URL is wrong."),
    ("network", "langfuse", ("url",), "The network failed"),
])
def test_a_failed_connection_points_at_the_fields_to_fix(what, kind, fields, first):
    problem = form_error(RemoteError("It failed.", what, hint="Check it."), kind)
    assert problem.fields == fields and problem.text.startswith(first) and "It failed. Check it." in problem.text


def test_command_line_advice_is_left_out_of_the_form():
    problem = form_error(RemoteError("Phoenix has no project 'x'.", "project", hint="Give one with --phoenix-project."),
                         "phoenix")
    assert "--phoenix-project" not in problem.text and "no project 'x'" in problem.text


def test_the_search_defaults_to_the_last_seven_days_and_sends_times_as_utc():
    f = filters_of(SyncForm(text=" paris ", user="u-anna", limit=50), now=NOW)
    assert (f.start, f.end, f.text, f.user, f.limit) == ("2026-11-30T12:00:00.000Z", None, "paris", "u-anna", 50)
    f = filters_of(SyncForm(start="2026-12-01T08:00Z", end="2026-12-02T08:00+00:00"), now=NOW)
    assert (f.start, f.end) == ("2026-12-01T08:00:00.000Z", "2026-12-02T08:00:00.000Z")


@pytest.mark.parametrize(("form", "words"), [
    (SyncForm(start="yesterday"), "not a date"),
    (SyncForm(start="2026-12-02T00:00Z", end="2026-12-01T00:00Z"), "range is empty"),
    (SyncForm(limit=7), "Limit 7"),
])
def test_a_bad_filter_is_a_clear_error(form, words):
    with pytest.raises(UserFacingError, match=words):
        filters_of(form, now=NOW)


def test_results_sort_as_the_original_sorts_them():
    rows = [ResultRow("b", "2026-12-01T10:00:00Z", "beta", "zoe", "s2", 3),
            ResultRow("a", "2026-12-02T10:00:00Z", "Alpha", "adam", "s1", None),
            ResultRow("c", "2026-11-30T10:00:00Z", "gamma", "Mia", "s3", 1)]
    assert [r.id for r in sort_rows(rows, "Newest")] == ["a", "b", "c"]
    assert [r.id for r in sort_rows(rows, "Oldest")] == ["c", "b", "a"]
    assert [r.id for r in sort_rows(rows, "Name")] == ["a", "b", "c"]
    assert [r.id for r in sort_rows(rows, "User")] == ["a", "c", "b"]
    assert [r.id for r in sort_rows(rows, "ID")] == ["a", "b", "c"]
    assert "3 obs" in rows[0].label and rows[0].label.endswith(" · b")


def test_sign_in_says_to_set_the_client_id_variable_when_the_build_has_none(monkeypatch):
    monkeypatch.delenv("LLM_SPACE_GITHUB_CLIENT_ID", raising=False)
    assert "LLM_SPACE_GITHUB_CLIENT_ID" in (SharePresenter.sign_in_problem() or "")
    monkeypatch.setenv("LLM_SPACE_GITHUB_CLIENT_ID", "Iv1.abc")
    assert SharePresenter.sign_in_problem() is None

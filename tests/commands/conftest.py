"""Fixtures of the command-line tests: `github`, the loopback GitHub of tests/share/conftest.py
with the environment pointing the app at it (for `llmspace auth` and `llmspace share`)."""

from tests.share.conftest import github

__all__ = ["github"]

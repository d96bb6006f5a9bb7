"""The redirect rule of `llmspace/origin.py`: same scheme, host and port (default ports
filled in, case ignored), or the https upgrade on the same host; anything else is refused."""

from __future__ import annotations

import pytest

from llmspace.origin import origin_label, refusal, same_origin


@pytest.mark.parametrize(("url", "target"), [
    ("http://h:1/v1/x", "/v1/y"),
    ("http://h:1/v1/x", "y?page=2"),
    ("https://API.example.com/v1", "https://api.example.com:443/v2"),
    ("http://h/v1", "https://h/v1"),          # the upgrade on default ports
    ("http://[::1]:8080/a", "http://[::1]:8080/b"),
])
def test_a_redirect_within_the_origin_is_allowed(url: str, target: str) -> None:
    assert same_origin(url, target)


@pytest.mark.parametrize(("url", "target"), [
    ("http://h:1/v1", "http://h:2/v1"),
    ("http://h/v1", "http://other/v1"),
    ("https://h/v1", "http://h/v1"),          # a downgrade
    ("http://h:8080/v1", "https://h:8443/v1"),
    ("http://h/v1", "//evil.example/v1"),
    ("https://h/v1", "https://h.evil.example/v1"),
    ("http://h/v1", "http://h:notaport/v1"),
])
def test_a_redirect_to_another_origin_is_refused(url: str, target: str) -> None:
    assert not same_origin(url, target)


def test_the_refusal_names_only_the_origin() -> None:
    assert refusal("http://u:pw@127.0.0.1:9/v1/x?token=t") == "redirected to another origin http://127.0.0.1:9"
    assert origin_label("https://Example.com:443/v1") == "https://example.com"
    assert origin_label("http://[::1]:8080/") == "http://[::1]:8080"

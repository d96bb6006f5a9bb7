"""Thread Storage deep links (plugin guide §11.1): scheme and host checked, the deepLinkId
validated, and everything after `<deepLinkId>/` passed on unchanged as the resource ID."""

from __future__ import annotations

import re

import pytest

from llmspace.errors import UserFacingError
from llmspace.plugins.code.deeplink import DeepLink, DeepLinkError, format_deep_link, parse_deep_link, valid_deep_link_id


@pytest.mark.parametrize(("url", "expected"), [
    # the guide's two links
    ("llm-space://threads/team-library/project/alpha?revision=latest",
     DeepLink("llm-space", "team-library", "project/alpha?revision=latest", False)),
    ("llm-space-dev://threads/team-library/project/alpha?revision=latest",
     DeepLink("llm-space-dev", "team-library", "project/alpha?revision=latest", True)),
    # one segment, many segments
    ("llm-space://threads/atlas/alpha", DeepLink("llm-space", "atlas", "alpha", False)),
    ("llm-space://threads/atlas/a/b/c/d.json", DeepLink("llm-space", "atlas", "a/b/c/d.json", False)),
    # queries: kept as they are, several parameters, empty values, question marks inside
    ("llm-space://threads/atlas/p?a=1&b=&c", DeepLink("llm-space", "atlas", "p?a=1&b=&c", False)),
    ("llm-space://threads/atlas/p?next=/x?y", DeepLink("llm-space", "atlas", "p?next=/x?y", False)),
    # fragments are part of the resource ID (the Storage decides what they mean)
    ("llm-space://threads/atlas/project/alpha#section-2", DeepLink("llm-space", "atlas", "project/alpha#section-2", False)),
    ("llm-space://threads/atlas/p?rev=3#top", DeepLink("llm-space", "atlas", "p?rev=3#top", False)),
    # the scheme and the host in any case; the result's scheme is lowercase
    ("LLM-SPACE://threads/atlas/x", DeepLink("llm-space", "atlas", "x", False)),
    ("Llm-Space-Dev://THREADS/atlas/x", DeepLink("llm-space-dev", "atlas", "x", True)),
    # ...but the resource ID keeps its case
    ("llm-space://threads/atlas/Project/Alpha", DeepLink("llm-space", "atlas", "Project/Alpha", False)),
    # trailing slashes and empty segments stay
    ("llm-space://threads/atlas/project/alpha/", DeepLink("llm-space", "atlas", "project/alpha/", False)),
    ("llm-space://threads/atlas/a//b", DeepLink("llm-space", "atlas", "a//b", False)),
    ("llm-space://threads/atlas//x", DeepLink("llm-space", "atlas", "/x", False)),
    # percent-encoded characters are not decoded
    ("llm-space://threads/atlas/my%20thread", DeepLink("llm-space", "atlas", "my%20thread", False)),
    ("llm-space://threads/atlas/a%2Fb?q=%26", DeepLink("llm-space", "atlas", "a%2Fb?q=%26", False)),
    ("llm-space://threads/atlas/%2E%2E/x", DeepLink("llm-space", "atlas", "%2E%2E/x", False)),
    # dots and traversal-looking IDs are passed on: validating them is the Storage's job
    ("llm-space://threads/atlas/../etc/passwd", DeepLink("llm-space", "atlas", "../etc/passwd", False)),
    # deepLinkIds with every allowed character
    ("llm-space://threads/team.lib_2-x/id", DeepLink("llm-space", "team.lib_2-x", "id", False)),
    # non-ASCII stays as it is
    ("llm-space://threads/atlas/cidades/Lisboa-ção", DeepLink("llm-space", "atlas", "cidades/Lisboa-ção", False)),
    # surrounding whitespace from pasting
    ("  llm-space://threads/atlas/x\n", DeepLink("llm-space", "atlas", "x", False)),
])
def test_parse_deep_link(url: str, expected: DeepLink) -> None:
    assert parse_deep_link(url) == expected


@pytest.mark.parametrize(("url", "message"), [
    ("", "The link is empty"),
    ("   ", "The link is empty"),
    ("https://threads/atlas/x", "Not an LLM Space link: 'https'"),
    ("llm-space-beta://threads/atlas/x", "Not an LLM Space link: 'llm-space-beta'"),
    ("threads/atlas/x", "no scheme"),
    ("llm-space:threads/atlas/x", "must be followed by //"),
    ("llm-space:/threads/atlas/x", "must be followed by //"),
    ("llm-space://thread/atlas/x", "Unsupported link target 'thread'"),
    ("llm-space://threads.example.com/atlas/x", "Unsupported link target"),
    ("llm-space://threads:80/atlas/x", "Unsupported link target 'threads:80'"),
    ("llm-space://user@threads/atlas/x", "Unsupported link target"),
    ("llm-space:///threads/atlas/x", "Unsupported link target ''"),
    ("llm-space://threads", "names no Thread Storage"),
    ("llm-space://threads/", "names no Thread Storage"),
    ("llm-space://threads?x=1", "names no Thread Storage"),
    ("llm-space://threads//project/alpha", "names no Thread Storage"),
    ("llm-space://threads/?x=1", "names no Thread Storage"),
    ("llm-space://threads/atlas", "names no resource after atlas/"),
    ("llm-space://threads/atlas/", "names no resource after atlas/"),
    ("llm-space://threads/atlas?revision=latest", "names no resource after atlas/"),
    ("llm-space://threads/atlas#x", "names no resource after atlas/"),
    ("llm-space://threads/atlas/?revision=latest", "names no resource after atlas/"),
    ("llm-space://threads/atlas/#top", "names no resource after atlas/"),
    ("llm-space://threads/Atlas/x", "'Atlas' is not a valid deepLinkId"),
    ("llm-space://threads/at%6Cas/x", "'at%6Cas' is not a valid deepLinkId"),
    ("llm-space://threads/team library/x", "space or control character at position 25"),
    ("llm-space://threads/atlas/a b", "space or control character"),
    ("llm-space://threads/atlas/a\tb", "space or control character"),
    ("llm-space://threads/atlas/a\x00b", "space or control character"),
    ("llm-space://threads/atlas/" + "x" * 9000, "longer than 8192 characters"),
])
def test_links_that_name_no_storage_resource_are_refused(url: str, message: str) -> None:
    with pytest.raises(DeepLinkError, match=re.escape(message)) as info:
        parse_deep_link(url)
    assert isinstance(info.value, UserFacingError)


@pytest.mark.parametrize(("text", "ok"), [
    ("atlas", True), ("team-library", True), ("a.b_c-9", True), ("0", True), ("...", True),
    ("", False), ("Atlas", False), ("team library", False), ("a/b", False), ("é", False),
    ("a%20b", False), ("atlas\n", False), (None, False), (42, False),
])
def test_valid_deep_link_id(text: object, ok: bool) -> None:
    assert valid_deep_link_id(text) is ok


def test_format_deep_link_round_trips() -> None:
    url = format_deep_link("atlas", "project/alpha?revision=latest")
    assert url == "llm-space://threads/atlas/project/alpha?revision=latest"
    assert parse_deep_link(url).url == url
    dev = format_deep_link("atlas", "x", dev=True)
    assert dev == "llm-space-dev://threads/atlas/x" and parse_deep_link(dev).dev
    assert parse_deep_link("LLM-SPACE://Threads/atlas/X").url == "llm-space://threads/atlas/X"


@pytest.mark.parametrize(("storage", "resource"), [("Atlas", "x"), ("atlas", ""), ("atlas", "?q=1"), ("atlas", "a b")])
def test_format_deep_link_refuses_what_parsing_would(storage: str, resource: str) -> None:
    with pytest.raises(DeepLinkError):
        format_deep_link(storage, resource)

"""MCP over streamable HTTP and SSE: a server URL that redirects to another origin (another
port here) is not followed, so no configured header reaches that origin, and the error says
where it pointed. The client the SDK gets comes from our factory (`mcp/connection.py`)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from llmspace.mcp.hub import McpHub
from tests.support.redirect_front import RedirectFront


@pytest.fixture
def other() -> Iterator[RedirectFront]:
    with RedirectFront() as server:
        yield server


@pytest.fixture
def front() -> Iterator[RedirectFront]:
    with RedirectFront() as server:
        yield server


@pytest.mark.parametrize("transport", ["streamableHttp", "sse"])
def test_a_redirect_to_another_origin_is_refused_and_no_header_reaches_it(hub: McpHub, front, other, transport):
    secret = f"xs-{uuid.uuid4().hex[:16]}"
    front.redirect("/", other.url + "/")
    hub.add_server(name="moved", transport=transport, url=front.url + "/mcp",
                   headers={"X-Api-Secret": secret, "Authorization": f"Bearer {secret}"})

    readiness = hub.test("moved")

    assert other.requests == [], f"the redirect target received {other.requests[0].headers}"
    assert readiness.status == "error"
    assert f"redirected to another origin http://127.0.0.1:{other.port}" in (readiness.lastError or ""), readiness.lastError
    assert secret not in (readiness.lastError or "")


def test_the_client_follows_a_redirect_within_the_origin_only(front, other):
    from llmspace.mcp.connection import mcp_http_client

    front.redirect("/old/", "/new/")
    front.redirect("/away/", other.url + "/")

    async def go() -> tuple[int, str]:
        async with mcp_http_client("demo")(headers={"X-Api-Secret": "s3cr3t-value"}) as client:
            same = await client.get(front.url + "/old/x", follow_redirects=True)
            try:
                await client.get(front.url + "/away/x", follow_redirects=True)
                away = "followed"
            except Exception as exc:  # the refusal
                away = str(exc)
        return same.status_code, away

    status, away = asyncio.run(go())
    assert status == 200 and front.requests[-1].path == "/new/x"
    assert front.requests[-1].headers.get("X-Api-Secret") == "s3cr3t-value"
    assert f"redirected to another origin http://127.0.0.1:{other.port}" in away
    assert other.requests == []

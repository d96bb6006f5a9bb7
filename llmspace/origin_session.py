"""`OriginSession`: a `requests.Session` that applies `llmspace/origin.py`'s redirect rule, so
an API key or configured header never follows a redirect to another origin.

    with OriginSession() as s:
        s.get(url, headers={"X-Subscription-Token": key})   # a 30x to another origin raises
                                                             # CrossOriginRedirect, nothing sent there

`requests` itself drops only `Authorization` when a redirect leaves the host; every other
header (Anthropic's `x-api-key`, Brave's `X-Subscription-Token`, configured `api-key`,
`X-Auth-Token`, …) would go along. `rebuild_auth` is the hook `requests` calls for each
redirect hop before it sends it, so the rule (`origin.same_origin`) is checked there, on
every hop. Model provider calls (`llmspace/providers/http.py`) and the web built-ins
(`llmspace/tools/builtins/web.py`) send their credentials through it. Part of the
foundation: any layer may use it.
"""

from __future__ import annotations

import requests

from .origin import refusal, same_origin


class CrossOriginRedirect(requests.RequestException):
    """A redirect to another origin, refused before anything was sent there (`llmspace/origin.py`)."""


class OriginSession(requests.Session):
    """A `requests.Session` that never sends a request to another origin on a redirect."""

    def rebuild_auth(self, prepared_request: requests.PreparedRequest, response: requests.Response) -> None:
        sent = response.request.url or ""
        target = prepared_request.url or ""
        if not same_origin(sent, target):
            raise CrossOriginRedirect(refusal(target), response=response)
        super().rebuild_auth(prepared_request, response)  # type: ignore[no-untyped-call]

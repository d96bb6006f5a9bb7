"""Clear, redacted messages for MCP connection and call failures.

`describe(exc, target, ...)` unwraps exception groups and maps the usual failures
(command not found, unreachable URL, 401/403, wrong transport, timeout, a server that
closed the connection or wrote junk to stdout) to one sentence that says what to do.
Configured env/header values are redacted; a URL is shown with its password and query
values masked (`redact.mask_url`). No `mcp` import.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ..errors import UserFacingError, redact
from ..redact import mask_url
from .connection import CONNECTION_CLOSED, Target


def leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _log_hint(target: Target) -> str:
    return f" See {target.log_path}." if target.log_path is not None and target.transport == "stdio" else ""


def describe(exc: BaseException, target: Target, *, phase: str, timeout: float | None = None, junk_lines: int = 0) -> str:
    """One user-facing sentence for a failure while `phase` ("connect", "tools/list", "the call to 'x'").
    A timeout names the step: "MCP server 'x': tools/list did not answer within 30 s."."""
    e = leaf(exc)
    who = f"MCP server {target.name!r}"
    junk = (f" It wrote {junk_lines} line(s) to stdout that are not MCP messages; a stdio server must write only"
            f" JSON-RPC to stdout (logs go to stderr).") if junk_lines else ""
    if isinstance(e, UserFacingError):
        msg = str(e)
    elif isinstance(e, (asyncio.TimeoutError, TimeoutError)):
        step = "initialize" if phase == "connect" else phase  # the MCP request that went unanswered
        msg = f"{who}: {step} did not answer within {timeout:g} s.{junk}{_log_hint(target)}"
    elif isinstance(e, (FileNotFoundError, NotADirectoryError)) and target.cwd and not os.path.isdir(target.cwd):
        msg = f"{who}: the working directory {target.cwd!r} does not exist."
    elif isinstance(e, FileNotFoundError) and target.transport == "stdio":
        msg = (f"{who}: the command {target.command!r} was not found (also searched the login-shell PATH)."
               f" Install it or give its full path.")
    elif isinstance(e, PermissionError) and target.transport == "stdio":
        msg = f"{who}: the command {target.command!r} is not executable."
    elif getattr(e, "code", None) == CONNECTION_CLOSED or type(e).__name__ in ("ClosedResourceError", "BrokenResourceError", "EndOfStream"):
        if phase == "connect":
            msg = f"{who} closed the connection while starting (did it exit?).{junk}{_log_hint(target)}"
        else:
            again = "starts it again" if target.transport == "stdio" else "reconnects"
            msg = f"{who} closed the connection during {phase} (it may have crashed); the next call {again}.{_log_hint(target)}"
    else:
        msg = _http_message(e, target, phase) or f"{who} failed during {phase}: {type(e).__name__}: {e}.{junk}{_log_hint(target)}"
    return redact(msg, target.secrets)


_STATUS_TEXT = {"Unauthorized": 401, "Forbidden": 403, "Not Found": 404, "Method Not Allowed": 405,
                "Not Acceptable": 406, "Unsupported Media Type": 415}


def _http_message(e: BaseException, target: Target, phase: str) -> str | None:
    who = f"MCP server {target.name!r}"
    name = type(e).__name__
    response: Any = getattr(e, "response", None)
    status = getattr(response, "status_code", None)
    status = status if status is not None else _STATUS_TEXT.get(str(e).strip())
    if status in (401, 403):
        return f"{who} refused the request ({status} unauthorized): check the headers (API key or token)."
    if status in (404, 405, 406, 415):
        other = "sse" if target.transport == "streamableHttp" else "streamableHttp"
        return (f"{who} answered HTTP {status} at {mask_url(target.url)}: wrong URL or transport"
                f" (try transport {other!r}, or check the path, e.g. /mcp or /sse).")
    if status is not None:
        return f"{who} answered HTTP {status} at {mask_url(target.url)} during {phase}: check the URL and the transport."
    if name in ("ConnectError", "ConnectTimeout") or isinstance(e, ConnectionError):
        return f"{who} is unreachable at {mask_url(target.url)}: is it running?"
    return None

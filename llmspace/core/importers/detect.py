"""Import dispatch: file bytes -> threads, or the reason the file was skipped.

Order for one JSON value: Aurora (`Messages` + `Tools`) first; then a value that is not
"foreign-looking" (a root array, a root `messages` array, Aurora, a Langfuse observations
payload) and validates as a Thread is native; everything else goes through the
OpenAI/Anthropic normaliser. `.jsonl`/`.ndjson` files hold one export per line.

`parse_import(data, name)` never raises for bad input: it returns threads or a skip reason.
Pure (no I/O).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...errors import MalformedJsonError, UserFacingError, ValidationFailed
from ...jsonio import loads_located
from ..model import Thread
from ..threadio import thread_from_data
from .aurora import is_aurora, normalize_aurora
from .foreign import ModelResolver, normalize_foreign

JSONL_SUFFIXES = (".jsonl", ".ndjson")
# An object without any of these keys is not taken as a native thread: it is skipped with a
# reason (the original app would import it as an empty thread).
_THREAD_KEYS = frozenset(Thread.model_fields) | {"blobs"}


@dataclass
class ParseResult:
    """Threads found in one file, problems with parts of it, and the skip reason if none."""

    threads: list[Thread] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    skip: str | None = None


def _is_langfuse(value: dict[str, Any]) -> bool:
    data = value.get("data")
    if not isinstance(data, list):
        return False
    return any(isinstance(o, dict) and isinstance(o.get("id"), str)
               and (isinstance(o.get("traceId"), str) or isinstance(o.get("trace_id"), str)) for o in data)


def _problem_text(exc: ValidationFailed) -> str:
    shown = "; ".join(f"{p}: {m}" for p, m in exc.problems[:3])
    more = f" (and {len(exc.problems) - 3} more)" if len(exc.problems) > 3 else ""
    return shown + more


def thread_from_value(value: Any, resolve_model: ModelResolver | None = None) -> Thread | str:
    """One parsed JSON value as a Thread, or the reason it is not one."""
    if not isinstance(value, (dict, list)):
        return "not a JSON object or array"
    if is_aurora(value):
        data: dict[str, Any] | str = normalize_aurora(value)
    else:
        if isinstance(value, dict) and not isinstance(value.get("messages"), list):  # not a foreign export
            if _is_langfuse(value):
                return "a Langfuse trace payload, not a thread (open it from the trace panel)"
            if not _THREAD_KEYS.intersection(value):
                return "no thread fields (title, model, context, runHistory, …) found"
            try:
                return thread_from_data(value)
            except ValidationFailed as exc:
                return f"not a valid thread: {_problem_text(exc)}"
        data = normalize_foreign(value, resolve_model)
    if isinstance(data, str):
        return data
    try:
        return thread_from_data(data)
    except ValidationFailed as exc:
        return f"could not be converted: {_problem_text(exc)}"


def _one(value_bytes: bytes, name: str, resolve_model: ModelResolver | None) -> Thread | str:
    try:
        value = loads_located(value_bytes, name)
    except MalformedJsonError as exc:
        return getattr(exc, "summary", None) or f"malformed JSON at line {exc.line}, column {exc.column}: {exc.reason}"
    try:
        return thread_from_value(value, resolve_model)
    except RecursionError:
        return "nested too deeply to import"
    except UserFacingError as exc:
        return str(exc)


def parse_import_detailed(data: bytes, name: str, resolve_model: ModelResolver | None = None) -> ParseResult:
    """Every thread in a file's bytes; `name` (the file name) picks JSON or JSON Lines."""
    if name.lower().endswith(JSONL_SUFFIXES):
        return _parse_lines(data, name, resolve_model)
    result = ParseResult()
    if not data.strip():
        result.skip = "the file is empty"
        return result
    found = _one(data, name, resolve_model)
    if isinstance(found, str):
        if found.startswith("malformed JSON") and data.strip().count(b"\n") > 0:
            # a JSON Lines export saved as .json: accept it when every line is a thread
            lines = _parse_lines(data, name, resolve_model, strict=True)
            if lines.threads and not lines.problems:
                return lines
        result.skip = found
    else:
        result.threads.append(found)
    return result


def _parse_lines(data: bytes, name: str, resolve_model: ModelResolver | None, strict: bool = False) -> ParseResult:
    """JSON Lines: one export per non-blank line; bad lines become problems (`strict`: stop at the first)."""
    result = ParseResult()
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        found = _one(line, f"{name} line {number}", resolve_model)
        if isinstance(found, str):
            found = found.replace("at line 1, column", "at column")
            result.problems.append(f"line {number}: {found}")
            if strict:
                break
        else:
            result.threads.append(found)
    if not result.threads:
        result.skip = "; ".join(result.problems[:3]) if result.problems else "the file is empty"
    return result


def parse_import(data: bytes, name: str, resolve_model: ModelResolver | None = None) -> list[Thread] | str:
    """The threads in a file's bytes, or the reason the file is skipped. Never raises for bad input."""
    result = parse_import_detailed(data, name, resolve_model)
    return result.skip if result.skip is not None else result.threads

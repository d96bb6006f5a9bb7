"""A loopback LLM server for tests: OpenAI Chat Completions, OpenAI Responses and Anthropic
Messages over real HTTP on 127.0.0.1, in each API's documented wire format.

Used by tests of `providers/`, `agent/` and the CLI (`llmspace run`, `models`, `ping`):

    with LoopbackLLM() as srv:                    # srv.base_url == "http://127.0.0.1:<port>/v1"
        srv.push(Turn(text="Hello", thinking="hmm",
                      tool_calls=[ToolCallSpec(id="call_1", name="read", arguments={"path": "x"})],
                      usage=(10, 5), chunk_size=4))
        srv.push_raw(status=429, headers={"Retry-After": "0"}, body=b'{"error":{"message":"slow down"}}')
        srv.push_raw(body=b"data: {...}\\n\\n", content_type="text/event-stream")   # recorded stream
        srv.push_drop(Turn(text="partial"))       # streams part of a turn then cuts the connection
        srv.push_hang()                           # one chunk, then stalls until the client disconnects
        srv.push_hang(silent=True)                # never answers at all (not even headers)
        srv.requests                              # [RecordedRequest(path, headers, body_json, method)]
        srv.responder = lambda kind, body: Turn(text=answer_for(body))   # answers computed from each request
        srv.max_active                            # the most POST requests it served at once (one
                                                  # counts until its last event is being written: a
                                                  # client may finish on that event, e.g. `[DONE]`)
        configure_provider(home, srv, api="openai-completions")   # writes settings/models.json

Responses are queued FIFO and consumed by whichever API is called; with none queued the
server answers the text "ok". Streaming is chosen by the request's `"stream": true`.
Streams use chunked transfer encoding, one SSE event per HTTP chunk, `Connection: close`.
Chat Completions streams carry usage only when `stream_options.include_usage` is asked for
(as OpenAI does); `srv.reject_stream_options = True` makes the server answer 400 to any
request carrying `stream_options` (as some local servers do).

`POST /v1/embeddings` answers in OpenAI's format with `srv.embed(text)` for each input
(default `letter_vector`: the counts of the letters a–z, so texts of the same words in any
order have cosine 1); `srv.embed = None` answers 404, as a server without embeddings does.
"""

from __future__ import annotations

import json
import os
import select
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL_DEFAULT = "loopback-model"


@dataclass
class ToolCallSpec:
    id: str | None
    name: str
    arguments: dict[str, Any] | str  # a str is sent verbatim (e.g. broken JSON)


@dataclass
class Turn:
    """One scripted model turn, rendered in whichever API is called."""

    text: str = ""
    thinking: str = ""
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    usage: tuple[int, int] | None = (10, 5)  # (input, output); None = no usage at all
    cache_read: int = 0
    cache_write: int = 0
    reasoning_tokens: int = 0
    chunk_size: int = 4  # characters per text/thinking/argument delta
    delay_per_chunk: float = 0.0
    finish_reason: str | None = None  # None = the API's normal value for the content
    reasoning_field: str = "reasoning_content"  # chat completions: where thinking is streamed
    signature: str = "sig-loopback"  # anthropic thinking signature
    # streamed turns: after half the events the server waits (up to 120 s) until the test sets this,
    # so a test can see a partial reply however loaded the machine is
    hold_midway: threading.Event | None = None


@dataclass
class RawResponse:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | list[bytes] = b""  # a list is written as separate HTTP chunks (streamed)
    content_type: str = "application/json"
    chunked: bool = True  # list bodies: False = no framing, no length, end by closing (HTTP/1.0 style)
    hang: bool = False  # list bodies: after the last piece, stall until the client disconnects


@dataclass
class _Drop:
    turn: Turn
    after_chunks: int


@dataclass
class _Hang:
    silent: bool = False  # True: send nothing at all, not even the status line


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body_json: Any
    method: str = "POST"


def letter_vector(text: str) -> list[float]:
    """The counts of the letters a–z in `text` (any case): the loopback server's embedding."""
    folded = text.lower()
    return [float(folded.count(chr(c))) for c in range(ord("a"), ord("z") + 1)]


def _chunks(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] if text else []


def _args_text(spec: ToolCallSpec) -> str:
    return spec.arguments if isinstance(spec.arguments, str) else json.dumps(spec.arguments, separators=(",", ":"))


class _ClientGone(Exception):
    pass


class LoopbackLLM:
    """A threaded HTTP server on 127.0.0.1 (port 0); use as a context manager."""

    def __init__(self, models: list[str] | None = None) -> None:
        self.models = list(models) if models is not None else [MODEL_DEFAULT]
        self.requests: list[RecordedRequest] = []
        self.reject_stream_options = False
        self.embed: Callable[[str], list[float]] | None = letter_vector
        self.disconnected = threading.Event()  # set when a hanging/dropped stream's client went away
        self._queue: deque[Any] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.request_seen = threading.Event()
        # With nothing queued: `responder(kind, body)` ("completions" | "responses" | "messages",
        # the request JSON) returns the Turn / RawResponse to serve, or None for the text "ok".
        self.responder: Any = None
        self.active = 0
        self.max_active = 0

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> LoopbackLLM:
        owner = self

        class Handler(_Handler):
            server_owner = owner

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="loopback-llm", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LoopbackLLM:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ------------------------------------------------------------------------
    def push(self, *turns: Turn) -> None:
        with self._lock:
            self._queue.extend(turns)

    def push_raw(self, status: int = 200, headers: dict[str, str] | None = None,
                 body: bytes | str | list[bytes] = b"", content_type: str | None = None,
                 chunked: bool = True, hang: bool = False) -> None:
        if isinstance(body, str):
            body = body.encode("utf-8")
        if content_type is None:
            sse = isinstance(body, list) or body.lstrip().startswith((b"data:", b"event:", b":"))
            content_type = "text/event-stream" if sse and status == 200 else "application/json"
        with self._lock:
            self._queue.append(RawResponse(status, dict(headers or {}), body, content_type, chunked, hang))

    def push_sse_file(self, path: Path | str) -> None:
        """Queue a recorded SSE body from a file, sent one event per HTTP chunk."""
        data = Path(path).read_bytes()
        events = [e + b"\n\n" for e in data.replace(b"\r\n", b"\n").split(b"\n\n") if e.strip()]
        self.push_raw(body=events, content_type="text/event-stream")

    def push_drop(self, turn: Turn | None = None, after_chunks: int = 2) -> None:
        """Stream the first `after_chunks` events of `turn`, then cut the connection."""
        with self._lock:
            self._queue.append(_Drop(turn or Turn(text="partial answer that never ends"), after_chunks))

    def push_hang(self, silent: bool = False) -> None:
        """Stream one chunk then stall until the client disconnects; `silent=True` stalls
        before sending any response at all (a server that never answers)."""
        with self._lock:
            self._queue.append(_Hang(silent))

    def _next(self, kind: str = "", body: Any = None) -> Any:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            item = self.responder(kind, body)
            if item is not None:
                return item
        return Turn(text="ok")

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)


class _Handler(BaseHTTPRequestHandler):
    server_owner: LoopbackLLM
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # -- plumbing -------------------------------------------------------------------------
    def _record(self, body_json: Any) -> None:
        owner = self.server_owner
        with owner._lock:
            owner.requests.append(RecordedRequest(self.path, dict(self.headers.items()), body_json, self.command))
        owner.request_seen.set()

    def _send_json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(value).encode("utf-8")
        self._send_bytes(status, data, "application/json", headers)

    def _send_bytes(self, status: int, data: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self._uncount()
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True

    def _start_stream(self, status: int = 200, ctype: str = "text/event-stream", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise _ClientGone() from exc

    def _end_stream(self) -> None:
        try:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _wait_for_disconnect(self) -> None:
        owner = self.server_owner
        sock = self.connection
        while not owner._stop.is_set():
            r, _, _ = select.select([sock], [], [], 0.05)
            if r:
                try:
                    if not sock.recv(4096):
                        break
                except OSError:
                    break
        owner.disconnected.set()

    # -- routes ---------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._record(None)
        if self.path.rstrip("/") == "/v1/models":
            data = [{"id": m, "object": "model", "created": 1700000000, "owned_by": "loopback"} for m in self.server_owner.models]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        self._record(body)
        path = self.path.split("?")[0].rstrip("/")
        if path == "/v1/embeddings" and self.server_owner.embed is not None:
            self._serve_embeddings(body, self.server_owner.embed)
            return
        kinds = {"/v1/chat/completions": "completions", "/v1/responses": "responses", "/v1/messages": "messages"}
        kind = kinds.get(path)
        if kind is None:
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        owner = self.server_owner
        if kind == "completions" and owner.reject_stream_options and isinstance(body, dict) and "stream_options" in body:
            self._send_json(400, {"error": {"message": "Unrecognized request argument supplied: stream_options", "type": "invalid_request_error"}})
            return
        item = owner._next(kind, body)
        body = body if isinstance(body, dict) else {}
        with owner._lock:
            owner.active += 1
            owner.max_active = max(owner.max_active, owner.active)
        self._counted = True
        try:
            if isinstance(item, RawResponse):
                self._serve_raw(item)
            elif isinstance(item, _Hang) and item.silent:
                self._wait_for_disconnect()
            elif isinstance(item, _Hang):
                self._serve_hang(kind, body)
            elif isinstance(item, _Drop):
                self._serve_turn(kind, body, item.turn, drop_after=item.after_chunks)
            else:
                self._serve_turn(kind, body, item)
        except _ClientGone:
            owner.disconnected.set()
        finally:
            self._uncount()

    _counted = False

    def _serve_embeddings(self, body: Any, embed: Callable[[str], list[float]]) -> None:
        texts = body.get("input") if isinstance(body, dict) else None
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._send_json(400, {"error": {"message": "input must be a string or a list of strings", "type": "invalid_request_error"}})
            return
        data = [{"object": "embedding", "index": i, "embedding": embed(t)} for i, t in enumerate(texts)]
        tokens = sum(len(t.split()) for t in texts)
        self._send_json(200, {"object": "list", "data": data, "model": body.get("model", ""),
                              "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    def _uncount(self) -> None:
        """This request stops counting as active, once: called before its last bytes are
        written, since the client may finish on them (the completions adapter stops at `[DONE]`)
        and ask again before this thread runs its `finally` — on a loaded machine that gap
        counted one request too many."""
        if self._counted:
            self._counted = False
            owner = self.server_owner
            with owner._lock:
                owner.active -= 1

    def _serve_raw(self, item: RawResponse) -> None:
        if isinstance(item.body, list):
            if not item.chunked:
                self.send_response(item.status)
                self.send_header("Content-Type", item.content_type)
                self.send_header("Connection", "close")
                for k, v in item.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.close_connection = True
            else:
                self._start_stream(item.status, item.content_type, item.headers)
            for n, part in enumerate(item.body):
                if n == len(item.body) - 1 and not item.hang:
                    self._uncount()
                if item.chunked:
                    self._chunk(part)
                else:
                    try:
                        self.wfile.write(part)
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError) as exc:
                        raise _ClientGone() from exc
            if item.hang:
                self._wait_for_disconnect()
            elif item.chunked:
                self._end_stream()
        else:
            self._send_bytes(item.status, item.body, item.content_type, item.headers)

    def _serve_hang(self, kind: str, body: dict[str, Any]) -> None:
        self._start_stream()
        events = list(_EVENTS[kind](Turn(text="waiting forever"), body))
        self._chunk(events[0])
        if len(events) > 1 and kind != "completions":
            self._chunk(events[1])
        self._wait_for_disconnect()

    def _serve_turn(self, kind: str, body: dict[str, Any], turn: Turn, drop_after: int | None = None) -> None:
        if not body.get("stream"):
            self._send_json(200, _WHOLE[kind](turn, body))
            return
        self._start_stream()
        events = list(_EVENTS[kind](turn, body))
        for n, event in enumerate(events):
            if drop_after is not None and n >= drop_after:
                # cut the connection without the terminating chunk
                try:
                    self.connection.shutdown(2)
                except OSError:
                    pass
                self.server_owner.disconnected.set()
                return
            if n == len(events) - 1:
                self._uncount()
            self._chunk(event)
            if turn.delay_per_chunk and n < len(events) - 1:  # none after the last: the reply is complete
                time.sleep(turn.delay_per_chunk)
            if turn.hold_midway is not None and n == len(events) // 2:
                turn.hold_midway.wait(120)
        self._end_stream()


# =========================================================================================
# Wire formats

_ID = {"n": 0}


def _new_id(prefix: str) -> str:
    _ID["n"] += 1
    return f"{prefix}{os.getpid():x}{_ID['n']:06d}"


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return f"{head}data: {payload}\n\n".encode()


def _model(body: dict[str, Any]) -> str:
    return str(body.get("model") or MODEL_DEFAULT)


# -- OpenAI Chat Completions ---------------------------------------------------------------
def _cc_finish(turn: Turn) -> str:
    return turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop")


def _cc_usage(turn: Turn) -> dict[str, Any] | None:
    if turn.usage is None:
        return None
    i, o = turn.usage
    return {"prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o,
            "prompt_tokens_details": {"cached_tokens": turn.cache_read, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": turn.reasoning_tokens, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}


def _cc_events(turn: Turn, body: dict[str, Any]) -> Iterator[bytes]:
    cid, created, model = _new_id("chatcmpl-"), 1700000000, _model(body)

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse({"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                     "system_fingerprint": "fp_loopback",
                     "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]})

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    for part in _chunks(turn.thinking, turn.chunk_size):
        yield chunk({turn.reasoning_field: part})
    for part in _chunks(turn.text, turn.chunk_size):
        yield chunk({"content": part})
    for i, call in enumerate(turn.tool_calls):
        first: dict[str, Any] = {"index": i, "type": "function", "function": {"name": call.name, "arguments": ""}}
        if call.id is not None:
            first["id"] = call.id
        yield chunk({"tool_calls": [first]})
        for part in _chunks(_args_text(call), turn.chunk_size):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})
    yield chunk({}, _cc_finish(turn))
    usage = _cc_usage(turn)
    if usage is not None and (body.get("stream_options") or {}).get("include_usage"):
        yield _sse({"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                    "system_fingerprint": "fp_loopback", "choices": [], "usage": usage})
    yield b"data: [DONE]\n\n"


def _cc_whole(turn: Turn, body: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None, "refusal": None}
    if turn.thinking:
        message[turn.reasoning_field] = turn.thinking
    if turn.tool_calls:
        message["tool_calls"] = [{"id": c.id or "", "type": "function", "function": {"name": c.name, "arguments": _args_text(c)}}
                                 for c in turn.tool_calls]
    out: dict[str, Any] = {"id": _new_id("chatcmpl-"), "object": "chat.completion", "created": 1700000000,
                           "model": _model(body), "system_fingerprint": "fp_loopback",
                           "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": _cc_finish(turn)}]}
    usage = _cc_usage(turn)
    if usage is not None:
        out["usage"] = usage
    return out


# -- OpenAI Responses ----------------------------------------------------------------------
def _rs_usage(turn: Turn) -> dict[str, Any] | None:
    if turn.usage is None:
        return None
    i, o = turn.usage
    return {"input_tokens": i, "input_tokens_details": {"cached_tokens": turn.cache_read},
            "output_tokens": o, "output_tokens_details": {"reasoning_tokens": turn.reasoning_tokens},
            "total_tokens": i + o}


def _rs_items(turn: Turn) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if turn.thinking:
        items.append({"id": _new_id("rs_"), "type": "reasoning",
                      "summary": [{"type": "summary_text", "text": turn.thinking}]})
    if turn.text:
        items.append({"id": _new_id("msg_"), "type": "message", "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "text": turn.text, "annotations": [], "logprobs": []}]})
    for c in turn.tool_calls:
        items.append({"id": _new_id("fc_"), "type": "function_call", "status": "completed",
                      "arguments": _args_text(c), "call_id": c.id or "", "name": c.name})
    return items


def _rs_response(turn: Turn, body: dict[str, Any], rid: str, status: str, output: list[Any]) -> dict[str, Any]:
    return {"id": rid, "object": "response", "created_at": 1700000000, "status": status, "error": None,
            "incomplete_details": ({"reason": "max_output_tokens"} if turn.finish_reason == "length" and status != "in_progress" else None),
            "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
            "model": _model(body), "output": output, "parallel_tool_calls": True,
            "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
            "store": False, "temperature": body.get("temperature", 1.0),
            "text": body.get("text") or {"format": {"type": "text"}}, "tool_choice": "auto",
            "tools": body.get("tools") or [], "top_p": 1.0, "truncation": "disabled",
            "usage": _rs_usage(turn) if status != "in_progress" else None, "user": None, "metadata": {}}


def _rs_events(turn: Turn, body: dict[str, Any]) -> Iterator[bytes]:
    seq = {"n": 0}

    def ev(kind: str, **data: Any) -> bytes:
        payload = {"type": kind, "sequence_number": seq["n"], **data}
        seq["n"] += 1
        return _sse(payload, kind)

    rid = _new_id("resp_")
    yield ev("response.created", response=_rs_response(turn, body, rid, "in_progress", []))
    yield ev("response.in_progress", response=_rs_response(turn, body, rid, "in_progress", []))
    items = _rs_items(turn)
    for oi, item in enumerate(items):
        iid = item["id"]
        if item["type"] == "reasoning":
            yield ev("response.output_item.added", output_index=oi, item={"id": iid, "type": "reasoning", "summary": []})
            yield ev("response.reasoning_summary_part.added", item_id=iid, output_index=oi, summary_index=0,
                     part={"type": "summary_text", "text": ""})
            for part in _chunks(turn.thinking, turn.chunk_size):
                yield ev("response.reasoning_summary_text.delta", item_id=iid, output_index=oi, summary_index=0, delta=part)
            yield ev("response.reasoning_summary_text.done", item_id=iid, output_index=oi, summary_index=0, text=turn.thinking)
            yield ev("response.reasoning_summary_part.done", item_id=iid, output_index=oi, summary_index=0,
                     part={"type": "summary_text", "text": turn.thinking})
        elif item["type"] == "message":
            yield ev("response.output_item.added", output_index=oi,
                     item={"id": iid, "type": "message", "status": "in_progress", "role": "assistant", "content": []})
            yield ev("response.content_part.added", item_id=iid, output_index=oi, content_index=0,
                     part={"type": "output_text", "text": "", "annotations": [], "logprobs": []})
            for part in _chunks(turn.text, turn.chunk_size):
                yield ev("response.output_text.delta", item_id=iid, output_index=oi, content_index=0, delta=part, logprobs=[])
            yield ev("response.output_text.done", item_id=iid, output_index=oi, content_index=0, text=turn.text, logprobs=[])
            yield ev("response.content_part.done", item_id=iid, output_index=oi, content_index=0,
                     part={"type": "output_text", "text": turn.text, "annotations": [], "logprobs": []})
        else:
            yield ev("response.output_item.added", output_index=oi,
                     item={**item, "status": "in_progress", "arguments": ""})
            for part in _chunks(item["arguments"], turn.chunk_size):
                yield ev("response.function_call_arguments.delta", item_id=iid, output_index=oi, delta=part)
            yield ev("response.function_call_arguments.done", item_id=iid, output_index=oi, arguments=item["arguments"])
        yield ev("response.output_item.done", output_index=oi, item=item)
    kind = "response.incomplete" if turn.finish_reason == "length" else "response.completed"
    status = "incomplete" if turn.finish_reason == "length" else "completed"
    yield ev(kind, response=_rs_response(turn, body, rid, status, items))


def _rs_whole(turn: Turn, body: dict[str, Any]) -> dict[str, Any]:
    status = "incomplete" if turn.finish_reason == "length" else "completed"
    return _rs_response(turn, body, _new_id("resp_"), status, _rs_items(turn))


# -- Anthropic Messages --------------------------------------------------------------------
def _an_stop(turn: Turn) -> str:
    mapping = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}
    if turn.finish_reason:
        return mapping.get(turn.finish_reason, turn.finish_reason)
    return "tool_use" if turn.tool_calls else "end_turn"


def _an_usage(turn: Turn, output: int | None = None) -> dict[str, Any]:
    i, o = turn.usage if turn.usage is not None else (0, 0)
    return {"input_tokens": i, "cache_creation_input_tokens": turn.cache_write,
            "cache_read_input_tokens": turn.cache_read, "output_tokens": o if output is None else output}


def _an_blocks(turn: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if turn.thinking:
        blocks.append({"type": "thinking", "thinking": turn.thinking, "signature": turn.signature})
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    for c in turn.tool_calls:
        args = c.arguments if isinstance(c.arguments, dict) else json.loads(c.arguments or "{}")
        blocks.append({"type": "tool_use", "id": c.id or _new_id("toolu_"), "name": c.name, "input": args})
    return blocks


def _an_events(turn: Turn, body: dict[str, Any]) -> Iterator[bytes]:
    mid = _new_id("msg_")
    message = {"id": mid, "type": "message", "role": "assistant", "content": [], "model": _model(body),
               "stop_reason": None, "stop_sequence": None, "usage": _an_usage(turn, output=1)}
    yield _sse({"type": "message_start", "message": message}, "message_start")
    yield _sse({"type": "ping"}, "ping")
    for idx, block in enumerate(_an_blocks(turn)):
        if block["type"] == "thinking":
            yield _sse({"type": "content_block_start", "index": idx,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""}}, "content_block_start")
            for part in _chunks(turn.thinking, turn.chunk_size):
                yield _sse({"type": "content_block_delta", "index": idx,
                            "delta": {"type": "thinking_delta", "thinking": part}}, "content_block_delta")
            yield _sse({"type": "content_block_delta", "index": idx,
                        "delta": {"type": "signature_delta", "signature": turn.signature}}, "content_block_delta")
        elif block["type"] == "text":
            yield _sse({"type": "content_block_start", "index": idx,
                        "content_block": {"type": "text", "text": ""}}, "content_block_start")
            for part in _chunks(turn.text, turn.chunk_size):
                yield _sse({"type": "content_block_delta", "index": idx,
                            "delta": {"type": "text_delta", "text": part}}, "content_block_delta")
        else:
            yield _sse({"type": "content_block_start", "index": idx,
                        "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}},
                       "content_block_start")
            args = json.dumps(block["input"], separators=(",", ":"))
            for part in _chunks(args, turn.chunk_size):
                yield _sse({"type": "content_block_delta", "index": idx,
                            "delta": {"type": "input_json_delta", "partial_json": part}}, "content_block_delta")
        yield _sse({"type": "content_block_stop", "index": idx}, "content_block_stop")
    out_tokens = turn.usage[1] if turn.usage is not None else 0
    yield _sse({"type": "message_delta", "delta": {"stop_reason": _an_stop(turn), "stop_sequence": None},
                "usage": {"output_tokens": out_tokens}}, "message_delta")
    yield _sse({"type": "message_stop"}, "message_stop")


def _an_whole(turn: Turn, body: dict[str, Any]) -> dict[str, Any]:
    return {"id": _new_id("msg_"), "type": "message", "role": "assistant", "model": _model(body),
            "content": _an_blocks(turn), "stop_reason": _an_stop(turn), "stop_sequence": None,
            "usage": _an_usage(turn)}


_EVENTS = {"completions": _cc_events, "responses": _rs_events, "messages": _an_events}
_WHOLE = {"completions": _cc_whole, "responses": _rs_whole, "messages": _an_whole}


# =========================================================================================
def configure_provider(home: Path | str, srv: LoopbackLLM, api: str = "openai-completions",
                       provider_id: str = "loop", model_id: str = MODEL_DEFAULT, *,
                       api_key: str | None = "sk-loopback-test-key-0001", reasoning: bool = True,
                       make_default: bool = True, extra_models: list[str] = ()) -> Path:
    """Write `settings/models.json` under `home` with a custom provider pointing at `srv`
    (merging with any providers already there). Returns the file path."""
    path = Path(home) / "settings" / "models.json"
    data: dict[str, Any] = {"providers": []}
    if path.exists():
        data = json.loads(path.read_text("utf-8"))
    providers = [p for p in data.get("providers", []) if p.get("id") != provider_id]
    ids = [model_id, *extra_models]
    models = [{"id": m, "name": m, "api": api, "reasoning": reasoning, "input": ["text", "image"],
               "contextWindow": 262144, "maxTokens": 131072,
               "cost": {"input": 1.0, "output": 2.0, "cacheRead": 0.5, "cacheWrite": 1.25}} for m in ids]
    entry: dict[str, Any] = {"id": provider_id, "name": f"Loopback {provider_id}", "baseUrl": srv.base_url,
                             "api": api, "models": models, "customModels": ids}
    if api_key is not None:
        entry["apiKey"] = api_key
    providers.append(entry)
    data["providers"] = providers
    if make_default:
        data["defaultModel"] = {"provider": provider_id, "id": model_id}
    from llmspace.jsonio import write_json_atomic

    write_json_atomic(path, data, trailing_newline=True)
    return path

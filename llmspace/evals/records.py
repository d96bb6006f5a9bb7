"""The records of a dataset evaluation, typed: one schema, one parser, one writer.

The journal (`evals/journal.py`) holds a `Header` first, then `CellRecord`s and
`JudgeRecord`s keyed by `key` (and, for conversations, a `TurnRecord` per finished turn before
its cell's record), and an `End` when every cell has a result (the journal of
`llmspace optimize` holds `Reflection`s and `Candidate`s between its `Header` and `End`:
`OptimizeRecord`, read by `parse_optimize_record`); `results.jsonl`
holds one `ResultRow` per cell. On disk each is a JSON object (`type` names a journal
record's kind); in code each is a frozen dataclass, read from its JSON by `parse_record` /
`parse_row` (the only places that look a field up with a default: a journal written by an
earlier version, or a row with fields left out, still reads) and written back by
`record_data` / `row_data`. A `Reply` is what one model call gave (also a response cache
entry, `parse_reply`). Consumers `match` on `JournalRecord` and end with `assert_never`, so
a new kind of record is a type error wherever it is not handled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

from .assertions import Check

ToolCallSeen: TypeAlias = tuple[str, dict[str, Any]]  # a tool call the model made: name, arguments


def _str(value: Any, default: str = "") -> str:
    return default if value is None else str(value)


def _opt_str(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _opt_float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _float(value: Any) -> float:
    return _opt_float(value) or 0.0


def _int(value: Any, default: int) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _tool_calls(value: Any) -> tuple[ToolCallSeen, ...]:
    return tuple((_str(c.get("name")), _dict(c.get("arguments"))) for c in _list(value) if isinstance(c, dict))


def _checks(value: Any) -> tuple[Check, ...]:
    return tuple(Check.from_data(c) for c in _list(value) if isinstance(c, dict))


def _scores(value: Any) -> dict[str, float]:
    return {str(k): float(v) for k, v in _dict(value).items() if _opt_float(v) is not None}


@dataclass(frozen=True)
class Usage:
    """The tokens of a call (`core/usage.py`'s dump, read back)."""

    input: int | None = None
    output: int | None = None
    total: int | None = None
    data: dict[str, Any] = field(default_factory=dict)  # as written (every field the usage had)


def _usage(value: Any) -> Usage | None:
    if not isinstance(value, dict):
        return None
    data = dict(value)
    return Usage(_opt_int(data.get("input")), _opt_int(data.get("output")), _opt_int(data.get("totalTokens")), data)


def _opt_int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Reply:
    """What one model call (or one tool loop, `--react`) gave; a cache entry is one too."""

    output: str = ""
    tool_calls: tuple[ToolCallSeen, ...] = ()
    usage: Usage | None = None
    cost: float = 0.0
    latency_ms: float | None = None
    first_token_ms: float | None = None
    finish: str | None = None
    error: str | None = None
    cached: bool = False
    turns: int | None = None  # --react; conversations: the user turns
    transcript: tuple[str, ...] | None = None  # --react
    conversation: tuple[dict[str, Any], ...] | None = None  # mode: conversation: the transcript (evals/conversation.py)


def parse_reply(data: dict[str, Any]) -> Reply:
    transcript = data.get("transcript")
    return Reply(_str(data.get("output")), _tool_calls(data.get("toolCalls")), _usage(data.get("usage")),
                 _float(data.get("cost")), _opt_float(data.get("latencyMs")), _opt_float(data.get("firstTokenMs")),
                 _opt_str(data.get("finish")), _opt_str(data.get("error")), bool(data.get("cached")),
                 _opt_int(data.get("turns")),
                 tuple(str(t) for t in transcript) if isinstance(transcript, list) else None,
                 _conversation(data.get("conversation")))


def _conversation(value: Any) -> tuple[dict[str, Any], ...] | None:
    return tuple(dict(e) for e in value if isinstance(e, dict)) if isinstance(value, list) else None


def reply_data(r: Reply) -> dict[str, Any]:
    data: dict[str, Any] = {
        "output": r.output, "toolCalls": [{"name": n, "arguments": a} for n, a in r.tool_calls],
        "usage": r.usage.data if r.usage is not None else None, "cost": r.cost, "latencyMs": r.latency_ms,
        "firstTokenMs": r.first_token_ms, "finish": r.finish, "error": r.error, "cached": r.cached}
    if r.turns is not None:
        data["turns"] = r.turns
    if r.transcript is not None:
        data["transcript"] = list(r.transcript)
    if r.conversation is not None:
        data["conversation"] = list(r.conversation)
    return data


@dataclass(frozen=True)
class Header:
    version: int
    name: str
    eval_file: str
    thread: str
    dataset: str
    hashes: dict[str, str]
    created_at: int


@dataclass(frozen=True)
class CellRecord:
    key: str
    case: str
    model: str
    variant: str
    repeat: int
    reply: Reply
    checks: tuple[Check, ...]
    finished_at: int
    lost_cost: float | None = None  # Ray: what calls of a worker that died cost (already in reply.cost)
    attempts: int | None = None  # Ray: runs of the cell when a worker died

    @property
    def error(self) -> str | None:
        return self.reply.error

    @property
    def cost(self) -> float:
        return self.reply.cost


@dataclass(frozen=True)
class JudgeRecord:
    key: str
    cell: str  # the judged cell's key
    assertion: int  # its index among the cell's assertions
    judge_model: str
    prompt_hash: str
    repeat: int
    prompt: str
    raw: str  # the judge's answer as written
    usage: Usage | None
    cost: float
    cached: bool
    latency_ms: float | None
    finished_at: int
    error: str | None = None
    scores: dict[str, float] | None = None
    reason: str | None = None
    check: Check | None = None


@dataclass(frozen=True)
class TurnRecord:
    """One finished turn of a conversation cell (`mode: conversation`, `evals/conversation.py`):
    a user, agent or tool message, or a judge's answer, journaled as it finishes."""

    key: str  # the cell's key
    index: int  # its place among the cell's turns, from 0
    entry: dict[str, Any]
    cost: float
    cached: bool
    finished_at: int


@dataclass(frozen=True)
class End:
    finished_at: int


@dataclass(frozen=True)
class Reflection:
    """One call of `llmspace optimize`'s reflector: the prompt it was shown for `step` and its answer."""

    step: int
    parent: str  # the id of the candidate it rewrote
    minibatch: tuple[str, ...]  # the training cases shown (their ids)
    instructions_hash: str  # sha256 of the reflector's instructions file
    raw: str  # the answer as written
    cost: float
    finished_at: int
    error: str | None = None


@dataclass(frozen=True)
class Candidate:
    """A prompt `llmspace optimize` proposed and what became of it."""

    id: str
    step: int
    parent: str | None
    text: str
    status: str  # original, rejected, lost (on the minibatch), validated
    reason: str | None = None
    minibatch: float | None = None  # pass rate on the minibatch
    parent_minibatch: float | None = None
    validation: float | None = None  # pass rate on the validation part


def spent_now(r: CellRecord | JudgeRecord | TurnRecord) -> float:
    """What a record's call cost this run: nothing when it was answered from the cache (or, for a
    conversation's cell, when its turns were counted as they came)."""
    if isinstance(r, CellRecord) and r.reply.conversation is not None:
        return 0.0
    cached = r.reply.cached if isinstance(r, CellRecord) else r.cached
    return 0.0 if cached else r.cost


def called_model(r: CellRecord | JudgeRecord) -> str:
    """The "provider/model" a record's call went to."""
    return r.model if isinstance(r, CellRecord) else r.judge_model


JournalRecord: TypeAlias = Header | CellRecord | JudgeRecord | TurnRecord | End
OptimizeRecord: TypeAlias = Header | Reflection | Candidate | End  # the journal of `llmspace optimize`


def parse_record(data: dict[str, Any]) -> JournalRecord | None:
    """The record a journal line holds; None for a kind this version does not know."""
    kind = data.get("type")
    if kind == "cell":
        return CellRecord(_str(data.get("key")), _str(data.get("case")), _str(data.get("model")),
                          _str(data.get("variant"), "default"), _int(data.get("repeat"), 1), parse_reply(data),
                          _checks(data.get("checks")), _int(data.get("finishedAt"), 0),
                          _opt_float(data.get("lostCost")), _opt_int(data.get("attempts")))
    if kind == "judge":
        check = data.get("check")
        return JudgeRecord(_str(data.get("key")), _str(data.get("cell")), _int(data.get("assertion"), -1),
                           _str(data.get("judgeModel")), _str(data.get("promptHash")), _int(data.get("repeat"), 1),
                           _str(data.get("prompt")), _str(data.get("raw")), _usage(data.get("usage")),
                           _float(data.get("cost")), bool(data.get("cached")), _opt_float(data.get("latencyMs")),
                           _int(data.get("finishedAt"), 0), _opt_str(data.get("error")),
                           _scores(data.get("scores")) if isinstance(data.get("scores"), dict) else None,
                           _opt_str(data.get("reason")), Check.from_data(check) if isinstance(check, dict) else None)
    if kind == "header":
        return Header(_int(data.get("version"), 0), _str(data.get("name")), _str(data.get("evalFile")),
                      _str(data.get("thread")), _str(data.get("dataset")),
                      {str(k): str(v) for k, v in _dict(data.get("hashes")).items()}, _int(data.get("createdAt"), 0))
    if kind == "end":
        return End(_int(data.get("finishedAt"), 0))
    if kind == "turn":
        return TurnRecord(_str(data.get("key")), _int(data.get("index"), 0), _dict(data.get("entry")), _float(data.get("cost")),
                          bool(data.get("cached")), _int(data.get("finishedAt"), 0))
    return None


def parse_optimize_record(data: dict[str, Any]) -> OptimizeRecord | None:
    """The record a line of an optimization's journal holds; None for a kind this version does not know."""
    kind = data.get("type")
    if kind == "reflection":
        return Reflection(_int(data.get("step"), 0), _str(data.get("parent")), tuple(str(c) for c in _list(data.get("minibatch"))),
                          _str(data.get("instructionsHash")), _str(data.get("raw")), _float(data.get("cost")),
                          _int(data.get("finishedAt"), 0), _opt_str(data.get("error")))
    if kind == "candidate":
        return Candidate(_str(data.get("id")), _int(data.get("step"), 0), _opt_str(data.get("parent")), _str(data.get("text")),
                         _str(data.get("status")), _opt_str(data.get("reason")), _opt_float(data.get("minibatch")),
                         _opt_float(data.get("parentMinibatch")), _opt_float(data.get("validation")))
    if kind in ("header", "end"):
        found = parse_record(data)
        return found if isinstance(found, (Header, End)) else None
    return None


def record_data(r: JournalRecord | OptimizeRecord) -> dict[str, Any]:
    """The JSON object of a record (one journal line)."""
    if isinstance(r, CellRecord):
        data: dict[str, Any] = {"type": "cell", "key": r.key, "case": r.case, "model": r.model, "variant": r.variant,
                                "repeat": r.repeat, **reply_data(r.reply), "checks": [c.to_data() for c in r.checks],
                                "finishedAt": r.finished_at}
        if r.lost_cost is not None:
            data["lostCost"] = r.lost_cost
        if r.attempts is not None:
            data["attempts"] = r.attempts
        return data
    if isinstance(r, JudgeRecord):
        data = {"type": "judge", "key": r.key, "cell": r.cell, "assertion": r.assertion, "judgeModel": r.judge_model,
                "promptHash": r.prompt_hash, "repeat": r.repeat, "prompt": r.prompt, "raw": r.raw,
                "usage": r.usage.data if r.usage is not None else None, "cost": r.cost, "cached": r.cached,
                "latencyMs": r.latency_ms, "finishedAt": r.finished_at}
        if r.error is not None:
            data["error"] = r.error
        if r.scores is not None:
            data["scores"] = r.scores
        if r.reason is not None:
            data["reason"] = r.reason
        if r.check is not None:
            data["check"] = r.check.to_data()
        return data
    if isinstance(r, Reflection):
        data = {"type": "reflection", "step": r.step, "parent": r.parent, "minibatch": list(r.minibatch),
                "instructionsHash": r.instructions_hash, "raw": r.raw, "cost": r.cost, "finishedAt": r.finished_at}
        if r.error is not None:
            data["error"] = r.error
        return data
    if isinstance(r, Candidate):
        return {"type": "candidate", "id": r.id, "step": r.step, "parent": r.parent, "text": r.text, "status": r.status,
                "reason": r.reason, "minibatch": r.minibatch, "parentMinibatch": r.parent_minibatch, "validation": r.validation}
    if isinstance(r, TurnRecord):
        return {"type": "turn", "key": r.key, "index": r.index, "entry": r.entry, "cost": r.cost, "cached": r.cached,
                "finishedAt": r.finished_at}
    if isinstance(r, Header):
        return {"type": "header", "version": r.version, "name": r.name, "evalFile": r.eval_file, "thread": r.thread,
                "dataset": r.dataset, "hashes": r.hashes, "createdAt": r.created_at}
    return {"type": "end", "finishedAt": r.finished_at}


# -- results.jsonl ---------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeSeen:
    """A judge of a cell as a result row shows it."""

    judge_model: str
    prompt_hash: str
    scores: dict[str, float] | None
    reason: str | None
    raw: str
    error: str | None
    cost: float


@dataclass(frozen=True)
class ResultRow:
    """One cell's outcome, as `results.jsonl` holds it and the grid and report show it."""

    key: str
    case: str
    model: str
    variant: str
    repeat: int
    status: str  # pass, fail, error or pending
    score: float | None
    output: str | None
    tool_calls: tuple[ToolCallSeen, ...]
    failed: tuple[str, ...]  # the labels of the failed assertions
    checks: tuple[Check, ...]
    judges: tuple[JudgeSeen, ...]
    cost: float
    input_tokens: int | None
    output_tokens: int | None
    latency_ms: float | None
    cached: bool | None  # None: the cell has not run
    error: str | None
    conversation: tuple[dict[str, Any], ...] | None = None  # mode: conversation: the transcript


def _judge_seen(data: dict[str, Any]) -> JudgeSeen:
    scores = data.get("scores")
    return JudgeSeen(_str(data.get("judgeModel")), _str(data.get("promptHash")),
                     _scores(scores) if isinstance(scores, dict) else None,
                     _opt_str(data.get("reason")), _str(data.get("raw")), _opt_str(data.get("error")), _float(data.get("cost")))


def parse_row(data: dict[str, Any]) -> ResultRow:
    output = data.get("output")
    return ResultRow(_str(data.get("key")), _str(data.get("case")), _str(data.get("model")),
                     _str(data.get("variant")) or "default", _int(data.get("repeat"), 1), _str(data.get("status")),
                     _opt_float(data.get("score")), None if output is None else str(output),
                     _tool_calls(data.get("toolCalls")), tuple(str(a) for a in _list(data.get("failed"))),
                     _checks(data.get("checks")),
                     tuple(_judge_seen(j) for j in _list(data.get("judges")) if isinstance(j, dict)),
                     _float(data.get("cost")), _opt_int(data.get("inputTokens")), _opt_int(data.get("outputTokens")),
                     _opt_float(data.get("latencyMs")),
                     None if data.get("cached") is None else bool(data.get("cached")), _opt_str(data.get("error")),
                     _conversation(data.get("conversation")))


def row_data(r: ResultRow) -> dict[str, Any]:
    """The JSON object of a row (one line of results.jsonl)."""
    data = {"key": r.key, "case": r.case, "model": r.model, "variant": r.variant, "repeat": r.repeat, "status": r.status,
            "score": r.score, "output": r.output, "toolCalls": [{"name": n, "arguments": a} for n, a in r.tool_calls],
            "failed": list(r.failed), "checks": [c.to_data() for c in r.checks],
            "judges": [{"judgeModel": j.judge_model, "promptHash": j.prompt_hash, "scores": j.scores, "reason": j.reason,
                        "raw": j.raw, "error": j.error, "cost": j.cost} for j in r.judges],
            "cost": r.cost, "inputTokens": r.input_tokens, "outputTokens": r.output_tokens, "latencyMs": r.latency_ms,
            "cached": r.cached, "error": r.error}
    if r.conversation is not None:
        data["conversation"] = list(r.conversation)
    return data

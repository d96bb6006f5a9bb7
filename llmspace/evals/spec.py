"""The evaluation file `<stem>.eval.yaml` (or `.eval.json`; the app names a second one of a
thread `<stem>.eval-2.yaml`, so none reads as another thread's): what to run, read and written.

    thread: demo.json            # beside this file, or a workspace path
    dataset: cases.csv           # relative to this file; in its folder or the workspace
    models: [openai/gpt-4.1, anthropic/claude-sonnet-4-5]
    variants: {formal: {tone: formal}}   # as matrix runs: NAME: {VAR: value}, or files / "A=1;B=2"
    repeat: 3
    assert: [{type: contains}]   # default assertions, before each case's own
    judge: openai/gpt-4.1-mini   # the model of llm-rubric assertions
    threshold: 1.0               # minimum pass rate per model/variant
    passK: 3                     # a case passes in at least this many of its repeats (default: all)
    budget: 2.50                 # USD per invocation
    concurrency: 4               # cells at once (and per provider unless providerConcurrency)
    providerConcurrency: {openai: 2}
    react: false
    maxTurns: 50
    executor: ray                # where cells run: local (default) or ray (docs/scale-out.md)
    rayAddress: auto             # auto | HOST:PORT | ray://HOST:PORT
    nodeLocal: {vllm: {GPU: 1}}  # providers every node serves itself: the resources their cells need
    embedder: openai/text-embedding-3-small   # the embedding model of `similar` assertions
    skipUnsupported: true        # run without the assertion types llmspace does not run (each named)
    scorer: includes             # Inspect datasets: how `target` is checked (includes, match or model)
    mode: conversation           # each row a scenario played by a simulated user (evals/conversation_setup.py:
                                 # userModel, toolSimulator, simulatedTools, maxUserTurns; docs/conversations.md)

`load_spec(path)` validates everything it can without the workspace; `EvalSpec.override(…)`
applies command-line flags for one run. `write_spec` writes a new file (commented YAML)
through `jsonio`. The model and variant syntax is that of matrix runs (`agent/matrix_spec.py`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..agent.matrix_spec import DEFAULT_VARIANT, parse_model, parse_variants
from ..errors import UserFacingError
from ..jsonio import load_yaml, loads_located, read_file_bytes, write_bytes_atomic
from .assertions import Assertion, parse_assertion
from .case import inside_folder
from .conversation_setup import KEYS as CONVERSATION_KEYS
from .conversation_setup import ConversationSettings, parse_settings

SUFFIXES = (".eval.yaml", ".eval.yml", ".eval.json")
NUMBERED = re.compile(r"\.eval-\d+\.(?:yaml|yml|json)$", re.IGNORECASE)  # <stem>.eval-2.yaml: another of <stem>'s
KEYS = {"thread", "dataset", "models", "variants", "repeat", "assert", "judge", "threshold", "passK", "budget",
        "concurrency", "providerConcurrency", "react", "maxTurns", "name", "description", "executor", "rayAddress", "nodeLocal", "embedder", "skipUnsupported",
        "scorer"}
SCORERS = ("includes", "match", "model")  # how an Inspect dataset's `target` is checked (evals/inspect_data.py)
EXECUTORS = ("local", "ray")
KEYS |= set(CONVERSATION_KEYS)  # mode: conversation, userModel, toolSimulator, simulatedTools, maxUserTurns


@dataclass
class EvalSpec:
    path: Path
    thread: str
    dataset: str
    models: list[tuple[str, str]]
    variants: dict[str, dict[str, str]] = field(default_factory=lambda: {DEFAULT_VARIANT: {}})
    repeat: int = 1
    assertions: list[Assertion] = field(default_factory=list)
    judge: tuple[str, str] | None = None
    threshold: float = 1.0
    pass_k: int | None = None
    budget: float | None = None
    concurrency: int = 4
    provider_concurrency: dict[str, int] = field(default_factory=dict)
    react: bool = False
    max_turns: int = 50
    name: str = ""
    raw_hash: str = ""  # sha256 of the file's bytes
    executor: str | None = None  # None: not in the file (the setting, else "local")
    ray_address: str | None = None
    node_local: dict[str, dict[str, float]] = field(default_factory=dict)  # provider -> Ray resources per cell
    embedder: tuple[str, str] | None = None  # the embedding model of `similar` assertions
    skip_unsupported: bool = False  # run without the assertions llmspace does not run (each named in the results)
    scorer: str | None = None  # Inspect datasets: includes (None), match or model
    dataset_flag: bool = False  # `dataset` was given on the command line (the user's own choice), not by the file
    conversation: ConversationSettings | None = None  # mode: conversation (evals/conversation_setup.py)

    @property
    def folder(self) -> Path:
        return self.path.parent

    def dataset_path(self, workspace: Path | None = None) -> Path:
        """The dataset file. One the evaluation file names must lie, symbolic links resolved, in
        the file's folder or in `workspace` (when given), as a promptfoo `file://` value must lie
        in its test file's folder: its content is sent to the models, and an evaluation file may
        come from someone else. A dataset given with `--dataset` may lie anywhere."""
        p = Path(self.dataset).expanduser()
        path = p if p.is_absolute() else self.folder / p
        if workspace is not None and not self.dataset_flag and not any(inside_folder(path, f) for f in (self.folder, workspace)):
            raise UserFacingError(f"The dataset {self.dataset} of {self.path.name} is outside the evaluation file's folder and "
                                  f"the workspace ({workspace}); it was not read.",
                                  hint="Move or copy the dataset into the workspace, or name it for one run with "
                                       "`llmspace eval run FILE --dataset PATH`.")
        return path

    def override(self, **flags: Any) -> EvalSpec:
        """A copy with the flags that were given (None = not given) applied, validated."""
        changes = {k: v for k, v in flags.items() if v is not None}
        if "dataset" in changes:
            changes["dataset_flag"] = True
        spec = replace(self, **changes)
        spec.validate()
        return spec

    def validate(self) -> None:
        if not self.models:
            raise UserFacingError(f"{self.path.name}: no models to run.", hint="List `models:` in the file or pass --models P/M,…")
        if len(set(self.models)) != len(self.models):
            raise UserFacingError(f"{self.path.name}: a model is listed twice.")
        if not 1 <= self.repeat <= 100:
            raise UserFacingError(f"repeat must be from 1 to 100, not {self.repeat}.")
        if not 1 <= self.concurrency <= 64:
            raise UserFacingError(f"concurrency must be from 1 to 64, not {self.concurrency}.")
        if self.budget is not None and not self.budget > 0:
            raise UserFacingError(f"budget must be a positive amount in USD, not {self.budget}.")
        if not 0 <= self.threshold <= 1:
            raise UserFacingError(f"threshold must be a pass rate from 0 to 1, not {self.threshold}.")
        if self.pass_k is not None and not 1 <= self.pass_k <= self.repeat:
            raise UserFacingError(f"passK must be from 1 to repeat ({self.repeat}), not {self.pass_k}.")
        if not 1 <= self.max_turns <= 1000:
            raise UserFacingError(f"maxTurns must be from 1 to 1000, not {self.max_turns}.")
        if not self.variants:
            self.variants = {DEFAULT_VARIANT: {}}
        if self.scorer is not None and self.scorer not in SCORERS:
            raise UserFacingError(f"scorer must be one of {', '.join(SCORERS)}, not {self.scorer!r}.")
        if self.executor is not None and self.executor not in EXECUTORS:
            raise UserFacingError(f"executor must be local or ray, not {self.executor!r}.")

    def settings_hash(self) -> str:
        """A hash of what decides the cells and their results (for resuming)."""
        data = {"models": [f"{p}/{m}" for p, m in self.models], "variants": self.variants, "repeat": self.repeat,
                "assert": [a.to_data() for a in self.assertions], "judge": "/".join(self.judge) if self.judge else None,
                "react": self.react, "maxTurns": self.max_turns if self.react else None}
        if self.embedder is not None:
            data["embedder"] = "/".join(self.embedder)
        if self.scorer not in (None, "includes"):
            data["scorer"] = self.scorer
        if self.conversation is not None:
            data["conversation"] = {**self.conversation.hash_data(), "maxTurns": self.max_turns}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def is_eval_file(name: str) -> bool:
    return name.lower().endswith(SUFFIXES) or NUMBERED.search(name) is not None


def eval_name(path: Path) -> str:
    """The evaluation's name: the file's stem (`quiz` for quiz.eval.yaml and quiz.eval-2.yaml)."""
    name = path.name
    if (numbered := NUMBERED.search(name)) is not None:
        return name[: numbered.start()]
    for suffix in SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _read(path: Path) -> dict[str, Any]:
    try:
        raw = read_file_bytes(path)
    except OSError as exc:
        raise UserFacingError(f"Could not read the evaluation file {path}: {exc.strerror or exc}.") from None
    if path.name.lower().endswith(".json"):
        data = loads_located(raw, path)
    else:
        import yaml

        try:
            data = load_yaml(raw.decode("utf-8-sig"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise UserFacingError(f"{path.name} is not valid YAML ({exc}).") from None
    if not isinstance(data, dict):
        raise UserFacingError(f"{path.name} must hold an object (thread:, dataset:, models:, …).")
    data["__hash"] = hashlib.sha256(raw).hexdigest()
    return data


def _int(data: dict[str, Any], key: str, default: int | None) -> int | None:
    value = data.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserFacingError(f"`{key}` must be a whole number, not {value!r}.")
    return value


def _float(data: dict[str, Any], key: str, default: float | None) -> float | None:
    value = data.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserFacingError(f"`{key}` must be a number, not {value!r}.")
    return float(value)


def parse_models_value(value: Any) -> list[tuple[str, str]]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list):
        raise UserFacingError(f"`models` must be a list of PROVIDER/MODEL, not {value!r}.")
    return [parse_model(str(m)) for m in items if str(m).strip()]


def variants_value(value: Any, base: Path) -> dict[str, dict[str, str]]:
    if value is None:
        return {DEFAULT_VARIANT: {}}
    if isinstance(value, dict):
        out: dict[str, dict[str, str]] = {}
        for name, values in value.items():
            if not isinstance(values, dict):
                raise UserFacingError(f"variant {name!r} must be an object of NAME: VALUE.")
            out[str(name)] = {str(k): v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for k, v in values.items()}
        return out or {DEFAULT_VARIANT: {}}
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return parse_variants(value, base)
    raise UserFacingError(f"`variants` must be an object of variants or a list of files / NAME=V;NAME=V, not {value!r}.")


def load_spec(path: Path) -> EvalSpec:
    data = _read(path)
    raw_hash = data.pop("__hash")
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise UserFacingError(f"{path.name}: unknown key {unknown[0]!r}.", hint="Known keys: " + ", ".join(sorted(KEYS)) + ".")
    for key in ("thread", "dataset"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise UserFacingError(f"{path.name}: `{key}` is missing.", hint=f"Add `{key}: PATH` to the file.")
    judge = data.get("judge")
    asserts = data.get("assert") or []
    if not isinstance(asserts, list):
        raise UserFacingError(f"{path.name}: `assert` must be a list of assertions.")
    pc = data.get("providerConcurrency") or {}
    if not isinstance(pc, dict) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in pc.values()):
        raise UserFacingError(f"{path.name}: `providerConcurrency` must map provider ids to whole numbers ≥ 1.")
    node_local = data.get("nodeLocal") or {}
    if not isinstance(node_local, dict) or not all(
            isinstance(r, dict) and all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in r.values())
            for r in node_local.values()):
        raise UserFacingError(f"{path.name}: `nodeLocal` must map provider ids to Ray resources, e.g. {{vllm: {{GPU: 1}}}}.")
    for key in ("executor", "rayAddress"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise UserFacingError(f"{path.name}: `{key}` must be text, not {data[key]!r}.")
    spec = EvalSpec(
        path=path, thread=data["thread"].strip(), dataset=data["dataset"].strip(),
        models=parse_models_value(data.get("models") or []),
        variants=variants_value(data.get("variants"), path.parent),
        repeat=_int(data, "repeat", 1) or 1,
        assertions=[parse_assertion(a, f"{path.name} assert {i}") for i, a in enumerate(asserts, 1)],
        judge=parse_model(str(judge)) if judge else None,
        threshold=_float(data, "threshold", 1.0) or 0.0,
        pass_k=_int(data, "passK", None),
        budget=_float(data, "budget", None),
        concurrency=_int(data, "concurrency", 4) or 4,
        provider_concurrency={str(k): int(v) for k, v in pc.items()},
        react=bool(data.get("react", False)),
        max_turns=_int(data, "maxTurns", 50) or 50,
        name=str(data.get("name") or eval_name(path)),
        raw_hash=raw_hash,
        executor=data.get("executor"),
        ray_address=data.get("rayAddress"),
        node_local={str(k): {str(r): float(v) for r, v in res.items()} for k, res in node_local.items()},
        embedder=parse_model(str(data["embedder"])) if data.get("embedder") else None,
        skip_unsupported=data.get("skipUnsupported") is True,
        scorer=str(data["scorer"]) if data.get("scorer") is not None else None,
    )
    spec.conversation = parse_settings(data, path.name)
    return spec


TEMPLATE = """\
# An evaluation of {thread} over the cases of {dataset}: `llmspace eval run {file}`.
# Flags of `eval run` override these values for one run. Keys:
#   models: PROVIDER/MODEL list · variants: NAME: {{VAR: value}} · repeat: runs per case
#   assert: default assertions (contains, regex, json-schema, llm-rubric, … see README)
#   judge: the model that scores llm-rubric assertions · threshold: minimum pass rate
#   passK: repeats a case must pass (default: all) · budget: USD · concurrency: cells at once
"""


def write_spec(path: Path, data: dict[str, Any]) -> None:
    """Write a new evaluation file (YAML with a comment header, or JSON for `.eval.json`)."""
    if path.name.lower().endswith(".json"):
        from ..jsonio import write_json_atomic

        write_json_atomic(path, data, trailing_newline=True)
        return
    import yaml

    head = TEMPLATE.format(thread=data.get("thread"), dataset=data.get("dataset"), file=path.name)
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)
    write_bytes_atomic(path, (head + body).encode("utf-8"))

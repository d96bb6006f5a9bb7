"""What a matrix run is, as data: its spec (models × variable variants × repeats, budget,
concurrency), its cells, and the results record kept in `.<stem>.matrix.json`; the parsing of
`--models PROVIDER/MODEL,…` and `--variants` (a JSON file or `NAME=VALUE;…`, shared with
`llmspace eval`), and the plan of cells.

Running a matrix is `agent/matrix.py`; its reports `agent/report.py`. Reads a variants file;
nothing else.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from ..jsonio import loads_located, read_file_bytes

RESULTS_VERSION = 1
DEFAULT_VARIANT = "default"


@dataclass
class MatrixSpec:
    models: list[tuple[str, str]]  # (provider id, model id)
    variants: dict[str, dict[str, str]] = field(default_factory=lambda: {DEFAULT_VARIANT: {}})
    repeat: int = 1
    budget: float | None = None  # USD for this invocation; None = no limit
    concurrency: int = 2
    react: bool = False
    auto_tools: bool = False
    max_turns: int = 50

    def validate(self) -> None:
        if not self.models:
            raise UserFacingError("A matrix needs at least one model.", hint="Pass --models PROVIDER/MODEL[,PROVIDER/MODEL…].")
        if not self.variants:
            self.variants = {DEFAULT_VARIANT: {}}
        if self.repeat < 1 or self.repeat > 100:
            raise UserFacingError(f"--repeat must be from 1 to 100, not {self.repeat}.")
        if self.concurrency < 1 or self.concurrency > 32:
            raise UserFacingError(f"--concurrency must be from 1 to 32, not {self.concurrency}.")
        if self.budget is not None and not self.budget > 0:
            raise UserFacingError(f"--budget must be a positive amount in USD, not {self.budget}.",
                                  hint="Leave --budget out to run without a limit.")


@dataclass
class MatrixCell:
    model: str  # "provider/model"
    variant: str
    repeat: int  # 1-based
    status: str = "pending"  # pending | completed | stopped | paused | failed | skipped
    run_id: str | None = None
    error: str | None = None
    output: str = ""
    usage: dict[str, Any] | None = None
    cost: float = 0.0
    first_token_ms: float | None = None
    duration_ms: float | None = None
    wall_ms: float | None = None
    finished_at: int | None = None

    @property
    def key(self) -> str:
        return f"{self.model} | {self.variant} | #{self.repeat}"

    @property
    def finished(self) -> bool:
        return self.status in ("completed", "stopped", "paused", "failed")


@dataclass
class MatrixResult:
    thread: str
    spec: MatrixSpec
    cells: list[MatrixCell]
    matrix_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    created_at: int = field(default_factory=lambda: int(time.time() * 1000))
    updated_at: int = 0
    spent: float = 0.0  # this invocation
    stopped_for_budget: bool = False

    @property
    def failed(self) -> list[MatrixCell]:
        return [c for c in self.cells if c.status == "failed"]

    def to_data(self) -> dict[str, Any]:
        spec = asdict(self.spec)
        spec["models"] = [f"{p}/{m}" for p, m in self.spec.models]
        return {"version": RESULTS_VERSION, "matrixId": self.matrix_id, "thread": self.thread,
                "createdAt": self.created_at, "updatedAt": self.updated_at, "spec": spec,
                "spent": self.spent, "stoppedForBudget": self.stopped_for_budget,
                "cells": [asdict(c) for c in self.cells]}

    @classmethod
    def from_data(cls, data: Any, source: str) -> MatrixResult:
        try:
            raw_spec = dict(data["spec"])
            raw_spec["models"] = [parse_model(m) for m in raw_spec["models"]]
            spec = MatrixSpec(**{k: v for k, v in raw_spec.items() if k in MatrixSpec.__dataclass_fields__})
            cells = [MatrixCell(**{k: v for k, v in c.items() if k in MatrixCell.__dataclass_fields__}) for c in data["cells"]]
            return cls(thread=data["thread"], spec=spec, cells=cells, matrix_id=data.get("matrixId", ""),
                       created_at=data.get("createdAt", 0), updated_at=data.get("updatedAt", 0),
                       spent=float(data.get("spent", 0.0)), stopped_for_budget=bool(data.get("stoppedForBudget")))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise UserFacingError(f"{source} is not a matrix results file this version understands ({exc}).",
                                  hint="Run the matrix again without --rerun-failed.") from None


# -- parsing ----------------------------------------------------------------------------------


def parse_model(text: str) -> tuple[str, str]:
    provider, sep, model = text.strip().partition("/")
    if not sep or not provider.strip() or not model.strip():
        raise UserFacingError(f"{text!r} is not PROVIDER/MODEL.", hint="Example: --models openai/gpt-4.1,anthropic/claude-sonnet-4-5")
    return provider.strip(), model.strip()


def parse_models(text: str) -> list[tuple[str, str]]:
    models = [parse_model(part) for part in text.split(",") if part.strip()]
    if len(set(models)) != len(models):
        raise UserFacingError("A model is listed twice in --models.")
    return models


def _variant_set(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in text.split(";"))):
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UserFacingError(f"{pair!r} in --variants is not NAME=VALUE.", hint='Example: --variants "tone=formal;lang=en"')
        out[name.strip()] = value
    return out


def parse_variants(items: list[str], base: Path | None = None) -> dict[str, dict[str, str]]:
    """Variants from `--variants` values: each a JSON file, or one set `NAME=V;NAME=V`.

    A JSON file holds `{"variant name": {"VAR": "value", …}, …}` or a list of
    `{"name": …, "variables": {…}}` objects (or of plain variable objects)."""
    variants: dict[str, dict[str, str]] = {}
    for item in items:
        path = Path(item).expanduser()
        if base is not None and not path.is_absolute() and not path.exists():
            path = base / path
        if "=" not in item and not path.is_file():
            raise UserFacingError(f"--variants {item!r} is neither a JSON file nor NAME=VALUE pairs.")
        if "=" not in item or path.is_file():
            variants.update(_variants_from_file(path))
        else:
            variants[item.strip()] = _variant_set(item)
    return variants or {DEFAULT_VARIANT: {}}


def _variants_from_file(path: Path) -> dict[str, dict[str, str]]:
    try:
        data = loads_located(read_file_bytes(path), path)
    except OSError as exc:
        raise UserFacingError(f"Could not read {path}: {exc.strerror or exc}.") from None
    out: dict[str, dict[str, str]] = {}
    if isinstance(data, dict):
        items = list(data.items())
    elif isinstance(data, list):
        items = []
        for i, entry in enumerate(data, 1):
            if isinstance(entry, dict) and isinstance(entry.get("variables"), dict):
                items.append((str(entry.get("name") or f"variant {i}"), entry["variables"]))
            else:
                items.append((f"variant {i}", entry))
    else:
        items = []
    for name, values in items:
        if not isinstance(values, dict) or not all(isinstance(k, str) for k in values):
            raise UserFacingError(f"{path}: variant {name!r} must be an object of NAME: VALUE.")
        out[str(name)] = {k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for k, v in values.items()}
    if not out:
        raise UserFacingError(f"{path} holds no variants.", hint='Write {"name": {"VAR": "value"}, …}.')
    return out


def plan_cells(spec: MatrixSpec) -> list[MatrixCell]:
    return [MatrixCell(model=f"{p}/{m}", variant=v, repeat=r)
            for p, m in spec.models for v in spec.variants for r in range(1, spec.repeat + 1)]

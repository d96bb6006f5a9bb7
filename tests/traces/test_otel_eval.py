"""An evaluation out as OpenTelemetry spans (loopback OTLP receiver): a 5-case evaluation with a
judge gives an `evaluation {name}` span with one `evaluate {case}` span per cell under it, each
assertion and the judge's verdict a `gen_ai.evaluation.result` event on its cell's span (name,
score, pass/fail label); the judge's explanation only with content capture on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.evals.support import Oracle, arithmetic_and_extraction, write_eval
from tests.support.cli import cli_in_process
from tests.support.llm_server import LoopbackLLM

from .otlp_receiver import OtlpReceiver, RxSpan
from .test_otel_export import enable_tracing


@pytest.fixture
def srv() -> Iterator[LoopbackLLM]:
    with LoopbackLLM() as server:
        server.responder = Oracle()
        yield server


def _evaluation(home, srv, capture: bool) -> list[RxSpan]:
    rows = arithmetic_and_extraction(10)[:5]
    path = write_eval(home, srv, rows, judge="loop/judge",
                      assertions=[{"type": "contains"}, {"type": "llm-rubric", "value": "correct\nconcise"}])
    with OtlpReceiver() as rx:
        enable_tracing(home, rx.url, capture=capture)
        done = cli_in_process(["eval", "run", str(path), "--no-cache"], env={"LLM_SPACE_HOME": str(home)})
        assert done.returncode == 0, done.stderr
        return rx.wait_for(lambda got: any(s.name == "evaluation quiz" for s in got)
                           and sum(s.name.startswith("evaluate ") for s in got) >= 5)


def test_an_evaluation_with_a_judge_gives_a_span_per_cell_with_each_verdict_as_an_evaluation_result_event(home, srv):
    spans = _evaluation(home, srv, capture=True)
    [evaluation] = [s for s in spans if s.name == "evaluation quiz"]
    cells = [s for s in spans if s.name.startswith("evaluate ")]
    assert sorted(s.name for s in cells) == [f"evaluate add-{i}" for i in range(1, 6)]
    for cell in cells:
        assert cell.parent_id == evaluation.span_id
        assert cell.attributes["llmspace.evaluation.passed"] is True
        assert cell.attributes["llmspace.evaluation.model"] == "loop/good"
        events = {attrs["gen_ai.evaluation.name"].split()[0]: attrs for name, attrs in cell.events
                  if name == "gen_ai.evaluation.result"}
        assert set(events) == {"contains", "llm-rubric"}, cell.events
        assert events["contains"]["gen_ai.evaluation.score.value"] == 1.0
        assert events["contains"]["gen_ai.evaluation.score.label"] == "pass"
        judge = events["llm-rubric"]
        assert judge["gen_ai.evaluation.score.label"] == "pass" and judge["gen_ai.evaluation.score.value"] > 0
        assert judge["gen_ai.evaluation.explanation"] == "Right and short."


def test_with_capture_off_the_judges_explanation_is_not_sent(home, srv):
    spans = _evaluation(home, srv, capture=False)
    events = [attrs for s in spans for name, attrs in s.events if name == "gen_ai.evaluation.result"]
    assert len(events) == 10
    assert not any("gen_ai.evaluation.explanation" in e for e in events)
    assert "Right and short" not in repr(spans)

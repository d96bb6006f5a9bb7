"""A promptfoo configuration whose defaultTest provider is `promptfoo:simulated-user` (shaped like
promptfoo's tau-simulated-user example) runs as a conversation evaluation: each test a scenario,
`vars.instructions` the user's goal sent as written, `maxTurns` its maxUserTurns, the user
played by `--user-model`; without a user model it is refused before any request, and the
prompt improver stays refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from llmspace.cli import main
from llmspace.errors import UserFacingError
from llmspace.evals.dataset import load_dataset
from tests.evals.conversation.scripted import setup
from tests.evals.conversation.test_example import only_folder, rows

CONFIG = """\
description: Parcel support with two customers
prompts:
  - You are the support agent of Parcelo. {{greeting}}
providers:
  - id: openai:gpt-4.1-mini
    config:
      tools: [file://functions/lookup_order.json]
      functionToolCallbacks: {lookup_order: file://callbacks/orders.js:lookupOrder}
defaultTest:
  provider:
    id: promptfoo:simulated-user
    config:
      maxTurns: 3
tests:
  - description: Customer checks an order
    vars:
      greeting: Be brief.
      instructions: >-
        You are Ana, {{customer}} of the shop. Say, in order: Where is my order A17? | Thanks. | ###STOP###
    assert:
      - type: llm-rubric
        value: The agent looked the order up and told the customer its status.
      - type: icontains
        value: can I help
  - description: Customer asks for a delivery date
    vars:
      greeting: Be brief.
      instructions: "You are Ben. Say, in order: When will my parcel arrive? | ###STOP###"
    assert:
      - type: not-icontains
        value: friday
"""


def _workspace(home: Path, srv, text: str = CONFIG) -> Path:
    setup(home, srv).unlink()
    ws = home / "workspace"
    (ws / "promptfooconfig.yaml").write_text(text, encoding="utf-8")
    return ws


def _new(ws: Path, *extra: str) -> int:
    return main(["eval", "new", "support.json", "--dataset", str(ws / "promptfooconfig.yaml"), "--models", "loop/agent",
                 "--tool-simulator", "loop/tools", "--judge", "loop/judge", *extra])


def test_a_simulated_user_configuration_runs_each_test_as_a_conversation_to_its_verdict(home, srv, scripted, capsys):
    ws = _workspace(home, srv)

    assert _new(ws, "--user-model", "loop/user") == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert "promptfoo:simulated-user" in err and "--user-model" in err and "functionToolCallbacks are not read" in err
    data = yaml.safe_load((ws / "support.eval.yaml").read_text("utf-8"))
    assert data["mode"] == "conversation" and data["userModel"] == "loop/user" and data["assert"] == []
    assert sum(scripted.calls.values()) == 0

    code = main(["eval", "run", str(ws / "support.eval.yaml")])

    err = capsys.readouterr().err
    assert code == 1, err  # one conversation passes, one fails: no error
    got = {r["case"] if "case" in r else r["caseId"]: r for r in rows(only_folder(home))}
    assert set(got) == {"Customer checks an order", "Customer asks for a delivery date"}, list(got)
    ana, ben = got["Customer checks an order"], got["Customer asks for a delivery date"]
    assert ana["status"] == "pass" and ben["status"] == "fail", (ana, ben)
    said = [e["text"] for e in ana["conversation"] if e["role"] == "user" and e.get("text")]
    assert said == ["Where is my order A17?", "Thanks."] and ana["conversation"][-1].get("stop")
    assert ana["output"] == "How else can I help?"  # non-judged assertions check the final reply
    assert any("Friday" in e.get("text", "") for e in ben["conversation"] if e["role"] == "assistant")
    users = [body for model, body in scripted.requests if model == "user"]
    systems = [str(b["messages"][0]["content"]) for b in users]
    assert any("You are Ana, {{customer}} of the shop." in s for s in systems)  # sent as written, never rendered
    agents = [str(b["messages"]) for model, b in scripted.requests if model == "agent"]
    assert agents and not any("Say, in order" in a for a in agents)  # the instructions are not the agent's
    assert scripted.calls["judge"] >= 1


def test_max_turns_is_each_scenarios_max_user_turns_and_instructions_leave_the_agents_variables(tmp_path):
    (tmp_path / "promptfooconfig.yaml").write_text(CONFIG.replace("maxTurns: 3", "maxTurns: 7"), encoding="utf-8")
    data = load_dataset(tmp_path / "promptfooconfig.yaml")
    assert data.conversation and len(data.cases) == 2
    case = data.cases[0]
    assert case.values["maxUserTurns"] == "7" and "instructions" not in case.values and case.values["greeting"] == "Be brief."
    assert yaml.safe_load(case.values["user"])["goal"].startswith("You are Ana, {{customer}}")


def test_without_a_user_model_the_file_is_refused_before_any_request(home, srv, scripted, capsys):
    ws = _workspace(home, srv)

    assert _new(ws) == 2
    err = capsys.readouterr().err
    assert "promptfoo:simulated-user" in err and "--user-model" in err and "hosted service" in err
    assert not (ws / "support.eval.yaml").exists()
    (ws / "support.eval.yaml").write_text(yaml.safe_dump({
        "thread": "support.json", "dataset": "promptfooconfig.yaml", "mode": "conversation", "models": ["loop/agent"],
        "toolSimulator": "loop/tools", "judge": "loop/judge", "assert": []}), encoding="utf-8")
    assert main(["eval", "run", str(ws / "support.eval.yaml")]) == 2
    err = capsys.readouterr().err
    assert "needs a model to play the user" in err and "--user-model" in err
    (ws / "support.eval.yaml").write_text(yaml.safe_dump({
        "thread": "support.json", "dataset": "promptfooconfig.yaml", "models": ["loop/agent"], "judge": "loop/judge",
        "assert": []}), encoding="utf-8")
    assert main(["eval", "run", str(ws / "support.eval.yaml")]) == 2
    err = capsys.readouterr().err
    assert "promptfoo:simulated-user" in err and "mode: conversation" in err
    assert sum(scripted.calls.values()) == 0


@pytest.mark.parametrize("text, says", [
    (CONFIG.replace("promptfoo:simulated-user", "promptfoo:anthropic:prompt-improver"), "--variants"),
    (CONFIG.replace("      maxTurns: 3", "      maxTurns: 3\n      initialMessages: []"), "initialMessages"),
    (CONFIG.replace('      instructions: "You are Ben. Say, in order: When will my parcel arrive? | ###STOP###"\n', ""),
     "vars.instructions"),
    (CONFIG.replace("tests:\n  - description: Customer checks",
                    "tests:\n  - description: Single answer\n    provider: openai:gpt-4.1\n  - description: Customer checks"),
     "models:"),
])
def test_what_the_simulated_user_mapping_does_not_run_is_refused_naming_it(tmp_path, text, says):
    (tmp_path / "promptfooconfig.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(UserFacingError) as caught:
        load_dataset(tmp_path / "promptfooconfig.yaml")
    message = f"{caught.value} {caught.value.hint}"
    assert says in message and "nothing was run" in message and "promptfooconfig.yaml" in message

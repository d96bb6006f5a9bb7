"""What the promptfoo and Inspect readers do with each key of a file: run it, run it
differently (with a note), or refuse the file naming the key.

    status, what = CONFIG_KEYS["prompts"]      # ("different", "the thread is the prompt …")
    refuse_unknown(data, TEST_KEYS, "test 3", path)   # an unknown or refused key stops the read

One table per level of a file: the configuration (`CONFIG_KEYS`), a test and `defaultTest`
(`TEST_KEYS`), a test's `options` (`OPTION_KEYS`), an assertion (`ASSERT_KEYS`), the special
columns of a promptfoo CSV (`CSV_COLUMNS`) and the fields of an Inspect AI sample
(`INSPECT_FIELDS`). docs/promptfoo-compat.md lists the same keys; a test checks the two agree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from .promptfoo_simulated import is_simulated_user

RUN, DIFFERENT, REFUSE = "run", "different", "refuse"
Table = dict[str, tuple[str, str]]

CONFIG_KEYS: Table = {
    "tests": (RUN, "the cases: a list of tests, files, globs or file:// paths inside the file's folder"),
    "defaultTest": (RUN, "merged into every test: vars, assert, options, threshold, metadata"),
    "assertionTemplates": (RUN, "named assertions that `$ref: '#/assertionTemplates/NAME'` uses"),
    "description": (DIFFERENT, "not used: the evaluation's name is its file's"),
    "prompts": (DIFFERENT, "not used: the thread is the prompt (its {{variables}} take the test's vars)"),
    "providers": (DIFFERENT, "not used: the evaluation file's `models:` (or --models) are run"),
    "targets": (DIFFERENT, "not used: the evaluation file's `models:` (or --models) are run"),
    "env": (DIFFERENT, "not used: providers take their keys from llmspace's settings"),
    "evaluateOptions": (DIFFERENT, "not used: concurrency, repeat and cache are the evaluation file's"),
    "commandLineOptions": (DIFFERENT, "not used: the flags of `llmspace eval run` apply"),
    "outputPath": (DIFFERENT, "not used: results go to the results folder"),
    "outputs": (DIFFERENT, "not used: not a key of promptfoo's configuration (promptfoo ignores it; outputPath is its output)"),
    "sharing": (DIFFERENT, "not used: nothing is shared"),
    "writeLatestResults": (DIFFERENT, "not used: every run writes its results folder"),
    "metadata": (DIFFERENT, "not used (it describes the configuration)"),
    "tags": (DIFFERENT, "not used (it describes the configuration)"),
    "$schema": (DIFFERENT, "not used"),
    "scenarios": (REFUSE, "groups of vars × tests are not read yet; list the tests instead"),
    "redteam": (REFUSE, "red-team generation is not part of llmspace"),
    "extensions": (REFUSE, ("extension hooks are JavaScript or Python code that can add tests and assertions and change "
                            "vars (beforeAll, beforeEach), so the tests without them could give other verdicts")),
    "nunjucksFilters": (DIFFERENT, "not used: the filters serve the prompts, and the thread is the prompt"),
    "filters": (DIFFERENT, "promptfoo's older name of nunjucksFilters: not used (the thread is the prompt)"),
    "derivedMetrics": (DIFFERENT, "not computed: the verdicts do not depend on them"),
    "tracing": (DIFFERENT, "not used: llmspace's own traces are kept apart"),
}

TEST_KEYS: Table = {
    "vars": (RUN, ("the case's variables (a mapping, or a file:// path / list of paths to YAML or JSON); "
                  "a list value gives one case per value (the cartesian product across lists), and so does a file:// "
                  "glob value (one case per file it matches inside the file's folder, its text the value)")),
    "assert": (RUN, "the case's assertions (defaultTest's come first)"),
    "description": (RUN, "the case's name: its id in results.jsonl, the report, JUnit and messages"),
    "threshold": (RUN, "the case passes when its weighted assertion score reaches it (0–1)"),
    "metadata": (RUN, "the case's metadata (also variables when the thread uses the name)"),
    "options": (RUN, "see the test options"),
    "id": (RUN, "the case's id (an llmspace addition)"),
    "provider": (DIFFERENT, ("`promptfoo:simulated-user` (on the test or defaultTest) makes each test a conversation "
                             "(mode: conversation): vars.instructions is the user's goal, as written; config.maxTurns its "
                             "maxUserTurns; the user is played by --user-model P/M (or userModel:), without which the file "
                             "is refused. Any other provider, the model that answers the test, is refused: the evaluation "
                             "file's `models:` are run; promptfoo's prompt improver is refused naming variants")),
    "providerOutput": (REFUSE, "a fixed output is not checked: every case asks the models"),
    "assertScoringFunction": (REFUSE, "a scoring function is JavaScript or Python code"),
    "prompts": (REFUSE, "a test's prompt filter has no counterpart: the thread is the one prompt"),
    "dataset": (REFUSE, ("not a key of promptfoo's test case (its schema has none; promptfoo does not read the rows it "
                         "names), so the test would run without them: list the rows as `tests: file://FILE.csv` instead")),
    "filter": (REFUSE, "not a key of promptfoo's test case (promptfoo does not read it): filter the rows before listing them"),
}

OPTION_KEYS: Table = {
    "disableVarExpansion": (RUN, "list values stay one variable (as JSON) instead of one case per value"),
    "disableConversationVar": (RUN, "accepted: llmspace sets no _conversation variable"),
    "runSerially": (DIFFERENT, "accepted: cells run with the evaluation's concurrency"),
    "timeout": (DIFFERENT, ("accepted, not applied: a request waits as its provider's settings say (readTimeout, retry "
                            "deadline in models.json), not the test's milliseconds; a request that outlives those fails its cell")),
    "provider": (RUN, ("the judge of the test's model-graded assertions (llm-rubric, factuality, closed-QA, g-eval, "
                       "context-*, conversation-relevance, select-best): PROVIDER:MODEL (openai:gpt-4.1-mini, openai:chat:gpt-4.1-mini, "
                       "anthropic:messages:claude-…) or {id: …} read as llmspace's PROVIDER/MODEL, which must be configured;"
                       " code, exec: and file:// providers are refused; promptfoo's per-kind map {text: …, embedding: …}: "
                       "`text` is the judge and `embedding` the embedder of similar assertions (a similar assertion's "
                       "provider is its embedder). An assertion's own provider wins; other types note it")),
    "transform": (RUN, ("the output is transformed before every assertion of the test (JavaScript, or file:// .js / "
                        ".py), in the confined host of javascript and python assertions")),
    "postprocess": (RUN, "promptfoo's older name for transform: read as transform"),
    "rubricPrompt": (RUN, ("the judge prompt of the test's llm-rubric, factuality and model-graded-closedqa assertions: a text, "
                           "a JSON list of {role, content} messages or a file:// path inside the file's folder, with {{output}},"
                           " {{rubric}} (factuality and closed-QA: {{input}}, {{ideal}}, {{criteria}}, {{completion}}) and the "
                           "case's {{vars}} filled in as text, once; an llm-rubric is graded by promptfoo's answer {pass, score,"
                           " reason} (its threshold on 0–1); other model-graded types refuse it")),
    "prefix": (REFUSE, "prompt prefixes are not added: put the text in the thread"),
    "suffix": (REFUSE, "prompt suffixes are not added: put the text in the thread"),
    "storeOutputAs": (REFUSE, "outputs are not stored as variables of later tests"),
}

ASSERT_KEYS: Table = {
    "type": (RUN, "the assertion type (see Assertion types); `not-` inverts it"),
    "value": (RUN, "its value; {{var}} is rendered with the case's variables"),
    "threshold": (RUN, "its threshold; an llm-rubric threshold is read on promptfoo's 0–1 scale"),
    "weight": (RUN, "its weight in the case's score"),
    "assert": (RUN, "the assertions of an `assert-set` (without a threshold, they join the case's)"),
    "$ref": (RUN, "an assertion of `assertionTemplates`"),
    "metric": (DIFFERENT, "accepted: named metrics are not aggregated (a note says so)"),
    "provider": (RUN, ("the judge of this model-graded assertion (the embedder of a similar one), read as the test's "
                       "options.provider is")),
    "transform": (RUN, ("the output is transformed for this assertion, after the test's transform (JavaScript, or "
                        "file:// .js / .py), in the confined host of javascript and python assertions")),
    "contextTransform": (RUN, ("the context of a context-faithfulness, -recall or -relevance assertion, extracted from the "
                                "output (JavaScript, or file:// .js / .py) in the confined host of transforms instead of the "
                                "`context` variable; other types refuse it")),
    "rubricPrompt": (RUN, "this assertion's judge prompt, read as the test's options.rubricPrompt is (other types refuse it)"),
    "config": (DIFFERENT, "accepted, not read: a judged assertion's model parameters stay its judge's (a note says so)"),
}

CSV_COLUMNS: Table = {
    "__expected": (RUN, ("an assertion written as text (`contains: x`, `not-icontains: y`, `llm-rubric: …`, "
                        "`similar(0.8): …`), else an `equals`")),
    "__expected1…N": (RUN, "more assertions, as __expected"),
    "__description": (RUN, "the case's name, as a test's description"),
    "__metadata:*": (RUN, "a metadata entry of the case (`__metadata:topic`)"),
    "__threshold": (RUN, "the case's threshold, as a test's threshold"),
    "__config:__expected*:threshold": (RUN, "the threshold of that __expected assertion"),
    "__metric": (DIFFERENT, "accepted: named metrics are not aggregated (a note says so)"),
    "__config:*": (REFUSE, "other assertion configuration is not read yet"),
    "__prefix": (REFUSE, "prompt prefixes are not added: put the text in the thread"),
    "__suffix": (REFUSE, "prompt suffixes are not added: put the text in the thread"),
}

INSPECT_FIELDS: Table = {
    "input": (RUN, ("a text (the variable `input`, or a user message when the thread does not use it) or a "
                   "list of chat messages, sent as messages after the thread's own")),
    "target": (RUN, ("the expected answer (text or list), checked by the scorer chosen with `eval new --scorer "
                    "includes|match|model` (includes by default)")),
    "choices": (RUN, "multiple choice: the prompt lists them lettered and the answer letter is checked"),
    "id": (RUN, "the case's id"),
    "metadata": (RUN, "the case's metadata (also variables when the thread uses the name)"),
    "files": (DIFFERENT, "each file (inside the dataset's folder) is read; its text is the variable named by its key"),
    "sandbox": (REFUSE, "samples run no sandbox"),
    "setup": (REFUSE, "setup scripts run in a sandbox, which samples do not have"),
}


# promptfoo's own providers that drive a test rather than answer it, and what llmspace runs instead
_DRIVERS = {
    "promptfoo:anthropic:prompt-improver": ("promptfoo's prompt improver rewrites the prompt until the tests pass",
                                            ("llmspace does not rewrite prompts: compare prompt versions as variants "
                                            "(`llmspace eval new --variants`), or remove the provider to run the tests as "
                                            "written")),
}


def refuse_test_provider(data: dict[str, Any], where: str, path: Path) -> None:
    """Raise for a test's (or defaultTest's) own `provider`: the model that answers the test,
    which llmspace does not run (its evaluation file's `models:` answer every test); promptfoo's
    simulated user passes (the test is a conversation)."""
    if "provider" not in data or is_simulated_user(data["provider"]):  # a conversation: evals/promptfoo_simulated.py
        return
    value = data["provider"]
    ident = str(value.get("id") or "") if isinstance(value, dict) else str(value)
    driver = _DRIVERS.get(ident.strip())
    if driver is not None:
        raise UserFacingError(f"{path.name}: {where} uses the provider {ident!r} ({driver[0]}), which llmspace does not "
                              "run; nothing was run.", hint=driver[1] + ".")
    raise UserFacingError(f"{path.name}: {where} uses `provider` ({ident or 'a provider object'!s:.80}): the model that answers "
                          f"{'every test' if where == 'defaultTest' else 'this test'} is not chosen by the test in llmspace; "
                          "nothing was run.", hint="Remove it and name the model in the evaluation file's `models:` "
                          "(or --models PROVIDER/MODEL).")


def refuse_unknown(data: dict[str, Any], table: Table, where: str, path: Path, level: str) -> list[str]:
    """Raise for a key of `data` that `table` refuses or does not know; the keys run
    differently, for the caller's notes."""
    for key in data:
        entry = table.get(str(key))
        if entry is None:
            raise UserFacingError(f"{path.name}: {where} has the key {key!r}, which llmspace does not know in {level}; "
                                  "nothing was run.", hint="See docs/promptfoo-compat.md for the keys llmspace reads.")
        if entry[0] == REFUSE:
            raise UserFacingError(f"{path.name}: {where} uses `{key}` ({entry[1]}); nothing was run.",
                                  hint="Remove it, or see docs/promptfoo-compat.md for what llmspace runs.")
    return [str(k) for k in data if table[str(k)][0] == DIFFERENT]

"""stdout belongs to the protocol: console methods and process.stdout.write from plugin code
(at import and during calls) reach stderr, the stream stays valid, and process.stdin gives
plugin code nothing."""

from __future__ import annotations

import pytest

from .conftest import ALL_SUFFIXES, variant_id

NOISY = """
    console.log("console.log at import");
    process.stdout.write("process.stdout.write at import\\n");

    export default class Noisy {
      name = "noisy";
      description = "";
      parameters = { type: "object" };

      async execute(context, args) {
        console.log("console.log in execute", { not: "a protocol message" });
        console.info("console.info in execute");
        console.debug("console.debug in execute");
        console.warn("console.warn in execute");
        console.error("console.error in execute");
        console.table([{ table: "console.table in execute" }]);
        console.dir({ dir: "console.dir in execute" });
        process.stdout.write('{"jsonrpc": "2.0", "id": 1, "result": "forged"}\\n');
        await new Promise((resolve) => process.stdout.write("a write with a callback\\n", resolve));
        return "quiet answer";
      }
    }
"""


@pytest.mark.parametrize("variant", ALL_SUFFIXES, ids=variant_id, indirect=True)
def test_console_and_process_stdout_from_plugin_code_go_to_stderr_and_the_stream_stays_valid(start_plugin):
    client, _ = start_plugin({"tools/noisy": NOISY})
    assert client.tool("noisy") == {"type": "value", "value": "quiet answer"}
    for text in ("console.log at import", "process.stdout.write at import", "console.log in execute",
                 "a protocol message", "console.info in execute", "console.debug in execute", "console.warn in execute",
                 "console.error in execute", "console.table in execute", "console.dir in execute",
                 '"result": "forged"', "a write with a callback"):
        assert client.wait_stderr(text), (text, client.stderr)
    assert client.bad_lines == [] and client.orphans == []
    assert client.result("ping") == {}


def test_reading_process_stdin_in_plugin_code_gets_nothing_and_steals_no_protocol_bytes(start_plugin):
    source = """
        export default class Reads {
          name = "reads";
          description = "";
          parameters = { type: "object" };

          async execute() {
            const chunks = [];
            for await (const chunk of process.stdin) chunks.push(String(chunk));
            return chunks;
          }
        }
    """
    client, _ = start_plugin({"tools/reads": source})
    assert client.tool("reads") == {"type": "value", "value": []}
    assert client.result("ping") == {}

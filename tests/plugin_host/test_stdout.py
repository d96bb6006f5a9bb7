"""Every host (Python; JavaScript under Bun and Node): stdout belongs to the protocol.
What plugin code prints (Python: print(), sys.__stdout__, writes to file descriptor 1, child
processes; JavaScript: every console method and process.stdout.write), at import and during
calls, reaches stderr, the stream stays valid, and reading stdin gives plugin code nothing."""

from __future__ import annotations

import pytest

from .conftest import Code
from .js.conftest import ALL_SUFFIXES, variant_id

NOISY = Code(py="""
    import os
    import subprocess
    import sys

    print("printed at import")
    os.write(1, b"fd 1 at import\\n")

    class Noisy:
        name = "noisy"
        description = ""
        parameters = {"type": "object"}

        def execute(self, context, args):
            print("printed in execute", {"not": "a protocol message"})
            sys.__stdout__.write("sys.__stdout__ in execute\\n")
            sys.__stdout__.flush()
            os.write(1, b'{"jsonrpc": "2.0", "id": 1, "result": "forged"}\\n')
            subprocess.run([sys.executable, "-c", "print('child process stdout')"], check=True)
            return "quiet answer"
""", js="""
    console.log("printed at import");
    process.stdout.write("process.stdout.write at import\\n");

    export default class Noisy {
      name = "noisy";
      description = "";
      parameters = { type: "object" };

      async execute(context, args) {
        console.log("printed in execute", { not: "a protocol message" });
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
""")
PRINTED = {
    "py": ["fd 1 at import", "sys.__stdout__ in execute", "child process stdout"],
    "js": ["process.stdout.write at import", "console.info in execute", "console.debug in execute",
           "console.warn in execute", "console.error in execute", "console.table in execute", "console.dir in execute",
           "a write with a callback"],
}
EVERY_SUFFIX = [("python", ".py"), *ALL_SUFFIXES]


@pytest.mark.parametrize("any_host", EVERY_SUFFIX, ids=variant_id, indirect=True)
def test_what_plugin_code_prints_goes_to_stderr_and_the_stream_stays_valid(start_any_plugin, any_host):
    client, _ = start_any_plugin({"tools/noisy": NOISY})
    assert client.tool("noisy") == {"type": "value", "value": "quiet answer"}
    common = ["printed at import", "printed in execute", "a protocol message", '"result": "forged"']
    for text in common + PRINTED["js" if any_host.is_js else "py"]:
        assert client.wait_stderr(text), (text, client.stderr)
    assert client.bad_lines == [] and client.orphans == []
    assert client.result("ping") == {}


READS = Code(py="""
    import os
    import sys

    class Reads:
        name = "reads"
        description = ""
        parameters = {"type": "object"}

        def execute(self, context, args):
            try:
                line = input()
            except EOFError:
                line = "EOF"
            return [line, sys.stdin.read(), os.read(0, 100).decode()]
""", js="""
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
""")


def test_reading_stdin_in_plugin_code_gets_nothing_and_steals_no_protocol_bytes(start_any_plugin, any_host):
    client, _ = start_any_plugin({"tools/reads": READS})
    assert client.tool("reads")["value"] == ([] if any_host.is_js else ["EOF", "", ""])
    assert client.result("ping") == {}

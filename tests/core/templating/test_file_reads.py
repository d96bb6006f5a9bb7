"""local_file_reads: which local files an (imported) thread would read or probe when run."""

from __future__ import annotations

from typing import Any

from llmspace.core.templating.file_reads import local_file_reads
from llmspace.core.threadio import thread_from_data


def _thread(system: str = "", *, messages: list[dict[str, Any]] | None = None, **ctx: Any):
    return thread_from_data({"title": "t", "context": {"systemPrompt": system, "messages": messages or [], **ctx}})


def test_includes_file_variables_and_exists_calls_are_listed_as_written() -> None:
    t = _thread("{{@include('/etc/passwd')}}{% if exists('~/.aws/credentials') %}x{% endif %}{{ key }}",
                variables={"key": {"type": "file", "value": " ~/.ssh/id_rsa "}},
                messages=[{"id": "u1", "role": "user", "content": [
                    {"type": "text", "text": '{{@include("/proc/self/environ")}} {{@include("/etc/passwd")}}'}]}])
    reads = local_file_reads(t)
    assert reads.read == ["~/.ssh/id_rsa", "/etc/passwd", "/proc/self/environ"]
    assert reads.probed == ["~/.aws/credentials"]
    assert reads.describe("a.json") == (
        "thread a.json would read these local files when run: ~/.ssh/id_rsa, /etc/passwd, /proc/self/environ; "
        "and check whether these local files exist: ~/.aws/credentials")


def test_paths_built_from_text_and_working_directory_variables_are_resolved() -> None:
    t = _thread("{{@include(current_working_directory ~ '/AGENTS.md')}}{{@include(dir + '/x')}}{{@include(pick(1))}}",
                variables={"current_working_directory": {"type": "workingDirectory", "value": "~/proj"}},
                variableVariants={"active": "default", "variants": {"default": {"dir": "/srv"}}})
    assert local_file_reads(t).read == ["~/proj/AGENTS.md", "/srv/x", "(a path computed when run from pick)"]


def test_text_that_is_never_evaluated_is_not_listed() -> None:
    t = _thread("Hello {{ name }}", messages=[
        {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "{{@include('/etc/shadow')}}"}],
         "toolCalls": [{"id": "c1", "input": {"name": "web", "arguments": {}},
                        "output": {"content": [{"type": "text", "text": "{{ exists('/etc/hosts') }}"}]}},
                       {"id": "c2", "input": {"name": "fill", "arguments": {}},
                        "output": {"content": [{"type": "text", "text": "{{@include('/etc/group')}}"}]}}]}],
        tools=[{"type": "builtin", "name": "web"}, {"type": "function", "name": "fill"}])
    reads = local_file_reads(t)
    assert reads.read == ["/etc/group"] and reads.probed == []  # only the function tool's result


def test_a_thread_without_file_access_reports_nothing() -> None:
    t = _thread("{% if x %}{{ y.z }}{% endif %}", variables={"f": {"type": "file", "value": ""}})
    assert not local_file_reads(t)

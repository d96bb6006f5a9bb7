"""What the welcome view says about available models, computed without Tk."""

from __future__ import annotations

from llmspace.presenters.welcome import LocalServer, detected_lines


def test_a_configured_default_model_is_named_first_so_no_keys_in_the_environment_is_not_the_whole_story():
    lines = detected_lines([], [], ("loop", "loopback-model"))
    assert lines[0] == "Default model: loop/loopback-model."
    assert not any("Configure models" in line for line in lines)


def test_with_nothing_available_the_view_says_what_to_do():
    lines = detected_lines([], [], None)
    assert lines[-1].startswith("To run a thread, click Configure models")


def test_keys_and_local_servers_are_listed_and_the_probe_in_progress_is_shown():
    server = LocalServer("ollama", "Ollama", 11434, "http://127.0.0.1:11434/v1")
    assert "Providers detected: openai ($OPENAI_API_KEY)" in detected_lines([("openai", "OPENAI_API_KEY")], [server], None)
    assert "Local servers: Ollama on port 11434" in detected_lines([], [server], None)
    assert "Looking for local model servers…" in detected_lines([], None, None)
    assert not any("To run a thread" in line for line in detected_lines([], None, None))


def test_a_provider_set_up_in_the_settings_replaces_the_no_keys_advice():
    lines = detected_lines([], [], None, ["Acme"])
    assert "Ready in Settings › Models: Acme." in lines
    assert not any("No API keys" in line or "Configure models" in line for line in lines)


def test_with_nothing_available_the_view_offers_the_local_model_the_first_run_sheet_downloads():
    from llmspace.local import catalog
    from llmspace.local.models import human_size

    default = catalog.default_entry()
    last = detected_lines([], [], None)[-1]
    assert f"run {default.name} on this computer ({human_size(default.size)} download" in last, last
    assert "GGUF file" in last and "API key" in last, last

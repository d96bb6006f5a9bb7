"""Thread storages: resolveLatest(id, context), read(locator, context) and
write(thread, id, context), in snake_case or camelCase, plain or async."""

from __future__ import annotations

import pytest

from .conftest import Code

SNAKE = """
    class Library:
        display_name = "Library"
        deep_link_id = "library"
        capabilities = {"read": True, "write": True}

        def resolve_latest(self, id, context):
            return {"id": id, "version": "7", "filename": "alpha.thread.json"}

        def read(self, locator, context):
            return {"title": f"{locator['id']}@{locator['version']}", "endpoint": context.settings["endpoint"]}

        def write(self, thread, id, context):
            thread["saved"] = True  # the thread argument is the call's own copy
            return {"id": id or "new-1", "version": thread["title"]}
"""

CAMEL = """
    import asyncio

    class Library:
        displayName = "Library"
        deepLinkId = "library"
        capabilities = {"read": True, "write": True}

        async def resolveLatest(self, id, context):
            await asyncio.sleep(0)
            return {"id": id, "version": "7", "filename": "alpha.thread.json"}

        async def read(self, locator, context):
            return {"title": f"{locator['id']}@{locator['version']}", "endpoint": context.settings["endpoint"]}

        async def write(self, thread, id, context):
            return {"id": id or "new-1", "version": thread["title"]}
"""


@pytest.mark.parametrize("source", [SNAKE, CAMEL], ids=["snake_case", "camelCase async"])
def test_a_storage_resolves_reads_and_writes(start_plugin, source):
    client, extensions = start_plugin({"thread-storages/library.py": source})
    assert extensions["thread-storage:library"]["status"] == "active"
    context = {"settings": {"endpoint": "https://lib.example"}}

    def run(method, data):
        answer = client.execute("thread-storage", "library", data, context, method=method)
        assert "error" not in answer, answer
        return answer["result"]["value"]

    locator = run("resolveLatest", {"id": "project/alpha?revision=latest"})
    assert locator == {"id": "project/alpha?revision=latest", "version": "7", "filename": "alpha.thread.json"}
    assert run("read", {"locator": locator}) == {"title": "project/alpha?revision=latest@7", "endpoint": "https://lib.example"}
    assert run("write", {"thread": {"title": "T"}, "id": None}) == {"id": "new-1", "version": "T"}
    assert run("write", {"thread": {"title": "T"}, "id": "project/alpha"}) == {"id": "project/alpha", "version": "T"}


def test_a_method_the_capabilities_leave_out_is_error_32002(start_plugin):
    source = """
        class WriteOnly:
            display_name = "Write only"
            capabilities = {"read": False, "write": True}

            def write(self, thread, id, context):
                return {"id": "x"}

            def read(self, locator, context):
                return {}
    """
    client, _ = start_plugin({"thread-storages/wo.py": source})
    assert client.execute("thread-storage", "wo", {"locator": {"id": "x"}}, method="read")["error"]["code"] == -32002
    assert client.execute("thread-storage", "wo", {"id": "x"}, method="resolveLatest")["error"]["code"] == -32002
    assert client.execute("thread-storage", "wo", {"thread": {}, "id": None}, method="write")["result"]["value"] == {"id": "x"}


def test_storage_inputs_of_the_wrong_shape_are_error_32602(start_plugin):
    client, _ = start_plugin({"thread-storages/library.py": SNAKE})
    assert client.execute("thread-storage", "library", {"id": 5}, method="resolveLatest")["error"]["code"] == -32602
    assert client.execute("thread-storage", "library", {"locator": "x"}, method="read")["error"]["code"] == -32602
    assert client.execute("thread-storage", "library", {"thread": {}, "id": 3}, method="write")["error"]["code"] == -32602


def test_a_storage_context_has_the_host_callbacks(start_plugin):
    source = """
        class Notifies:
            display_name = "Notifies"
            capabilities = {"read": False, "write": True}

            def write(self, thread, id, context):
                context.notify("saving")
                return {"id": context.read_workspace_file("id.txt")}
    """
    client, _ = start_plugin({"thread-storages/n.py": source}, lambda m, p: "id-from-app" if m == "readWorkspaceFile" else None)
    answer = client.execute("thread-storage", "n", {"thread": {}, "id": None}, method="write", call_id="s1")
    assert answer["result"]["value"] == {"id": "id-from-app"}
    assert [m for m, p in client.callbacks] == ["notify", "readWorkspaceFile"]
    assert all(p["callId"] == "s1" for m, p in client.callbacks)


LISTING = """
    class Library:
        display_name = "Library"
        capabilities = {"read": True, "write": False}
        ITEMS = [{"id": f"project/{n}", "title": f"Thread {n}", "updatedAt": "2026-12-01T10:00:00Z"} for n in "abc"]

        def resolve_latest(self, id, context):
            return {"id": id}

        def read(self, locator, context):
            return {"title": locator["id"]}

        def list(self, context, options):
            found = [i for i in self.ITEMS if (options["query"] or "") in i["title"]]
            start = int(options["cursor"] or 0)
            page = {"items": found[start:start + 2]}
            if start + 2 < len(found):
                page["nextCursor"] = str(start + 2)
            return page
"""


JS_LISTING = """
        const ITEMS = ["a", "b", "c"].map((n) => ({ id: `project/${n}`, title: `Thread ${n}` }));
        export default class Library {
          displayName = "Library";
          capabilities = { read: true };
          resolveLatest(id) { return { id }; }
          read(locator) { return { title: locator.id }; }
          async list(context, { cursor, query }) {
            const found = ITEMS.filter((i) => i.title.includes(query ?? ""));
            const start = Number(cursor ?? 0);
            return { items: found.slice(start, start + 2), ...(start + 2 < found.length ? { nextCursor: String(start + 2) } : {}) };
          }
        }
    """

PLAIN = Code(py="""
    class Plain:
        display_name = "Plain"
        capabilities = {"read": True}

        def resolve_latest(self, id, context):
            return {"id": id}

        def read(self, locator, context):
            return {"title": locator["id"]}
""", js="""
        export default class Plain {
          displayName = "Plain";
          capabilities = { read: true };
          resolveLatest(id) { return { id }; }
          read(locator) { return { title: locator.id }; }
        }
    """)


def test_a_storage_with_list_reports_it_and_answers_pages_by_cursor_and_query(start_any_plugin, any_host):
    client, extensions = start_any_plugin({"thread-storages/library": Code(py=LISTING, js=JS_LISTING),
                                           "thread-storages/plain": PLAIN})
    assert extensions["thread-storage:library"]["metadata"]["capabilities"] == {"read": True, "write": False, "list": True}
    assert extensions["thread-storage:plain"]["metadata"]["capabilities"] == {"read": True, "write": False, "list": False}

    def page(data):
        answer = client.execute("thread-storage", "library", data, method="list")
        assert "error" not in answer, answer
        return answer["result"]["value"]

    first = page({})
    assert [i["id"] for i in first["items"]] == ["project/a", "project/b"] and first["nextCursor"] == "2"
    updated = {} if any_host.is_js else {"updatedAt": "2026-12-01T10:00:00Z"}  # the JavaScript source gives none
    assert page({"cursor": "2"}) == {"items": [{"id": "project/c", "title": "Thread c", **updated}]}
    assert [i["id"] for i in page({"query": "b"})["items"]] == ["project/b"]
    assert client.execute("thread-storage", "library", {"query": 3}, method="list")["error"]["code"] == -32602
    assert client.execute("thread-storage", "plain", {}, method="list")["error"]["code"] == -32002


def test_a_storage_without_list_reports_it_cannot_and_a_list_call_is_error_32002(start_plugin):
    client, extensions = start_plugin({"thread-storages/library.py": SNAKE})
    assert extensions["thread-storage:library"]["metadata"]["capabilities"]["list"] is False
    assert client.execute("thread-storage", "library", {}, method="list")["error"]["code"] == -32002

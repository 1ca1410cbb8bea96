"""render_html on hand-written sessions: branches, escaping, images, tool calls, markdown."""

from __future__ import annotations

import base64
import copy
import hashlib
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_host.lib.export import render_html
from tests.support import export_sample as sample
from tests.support.budget import examples
from tests.support.html_dom import container_attrs, entry_ids, section

ALL_KEYS = ["m0", "t0", "u1", "a1", "r1", "r2", "a2", "u3", "a3", "b1", "c1", "n1", "l1", "x1"]
LEAF_PATH = ["m0", "t0", "u1", "a1", "r1", "r2", "u3", "a3", "b1", "c1", "n1", "l1", "x1"]


def page(**kwargs) -> str:
    return render_html(sample.header(), sample.entries(), **kwargs)


DATA_BLOCK = re.compile(r'<script id="session-data" type="application/json">([A-Za-z0-9+/=]*)</script>')


def one_script_and_the_data(html: str) -> bool:
    """The page's own script and pi's ``#session-data`` block (base64 only: nothing from the
    session can end it early), and no other script."""
    rest, found = DATA_BLOCK.subn("", html)
    return found == 1 and rest.count("<script") == 1 and rest.count("</script>") == 1


def tree_items(html: str) -> list[tuple[str, str]]:
    """(key, class) of every sidebar line, in order."""
    return [(key, css) for css, key in re.findall(r'<li class="([^"]*)" data-key="([^"]*)"', html)]


def test_the_active_branch_ends_at_the_last_entry_and_the_rest_waits_in_the_store():
    html = page()
    assert entry_ids(html, "conversation") == LEAF_PATH
    assert entry_ids(html, "store") == ["a2"]
    assert container_attrs(html, "conversation")["data-leaf"] == "x1"


def test_a_given_leaf_shows_its_branch():
    html = page(leaf_id="a2")
    assert entry_ids(html, "conversation") == ["m0", "t0", "u1", "a1", "r1", "r2", "a2"]
    assert entry_ids(html, "store") == ["u3", "a3", "b1", "c1", "n1", "l1", "x1"]


def test_an_unknown_leaf_falls_back_to_the_last_entry():
    assert entry_ids(page(leaf_id="nope"), "conversation") == LEAF_PATH


def test_the_tree_lists_every_entry_indented_below_the_fork_and_marks_the_active_branch():
    html = page()
    items = tree_items(html)
    assert [key for key, _ in items] == ALL_KEYS
    classes = dict(items)
    assert "fork" in classes["r2"]
    assert "on-path" in classes["u3"] and "on-path" not in classes["a2"]
    assert "current" in classes["x1"]
    # Both children of the fork are indented one level; the chain above stays flat.
    assert re.search(r'data-key="a2" data-parent="r2" style="--indent:1"', html)
    assert re.search(r'data-key="u3" data-parent="r2" style="--indent:1"', html)
    assert re.search(r'data-key="r2" data-parent="r1">', html)
    # A label shows on its target, in the tree and in the conversation.
    assert re.search(r'data-key="u1"[^>]*><a href="#e-u1"><span class="label">start</span>', html)
    assert '<span class="label">start</span>' in section(html, "e-u1")


def test_the_header_shows_the_session():
    html = page()
    head = section(html, "session-header")
    assert "<h1>Greeting script</h1>" in head
    assert sample.SESSION_ID in head and "/home/dev/kite" in head
    assert "2026-12-02 09:14:03 UTC" in head
    assert "<title>Greeting script</title>" in html
    assert "<title>Mine &amp; yours</title>" in page(title="Mine & yours")


def test_message_text_is_escaped_everywhere():
    html = page()
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;alert('pwned')&lt;/script&gt;&lt;img src=x" in section(html, "e-u3")
    assert "upstream &lt;b&gt;failed&lt;/b&gt;" in section(html, "e-a3")
    # Only the page's own script element, and nothing closes it early.
    assert one_script_and_the_data(html)
    # markdown-it refuses javascript: links.
    assert 'href="javascript:' not in html


def test_hostile_session_fields_are_escaped():
    header = sample.header(id='"><script>alert(1)</script>', cwd="<b>cwd</b>")
    entries = sample.entries()
    entries.append(
        {
            "type": "session_info",
            "id": "z1",
            "parentId": "x1",
            "timestamp": "2026-12-02T09:15:00Z",
            "name": "</title><script>x()</script>",
        }
    )
    entries.append(
        {
            "type": "label",
            "id": "z2",
            "parentId": "z1",
            "timestamp": "2026-12-02T09:15:01Z",
            "targetId": "u1",
            "label": '<img src=x onerror="y()">',
        }
    )
    html = render_html(header, entries)
    assert one_script_and_the_data(html)
    assert "<b>cwd</b>" not in html and "&lt;b&gt;cwd&lt;/b&gt;" in html
    assert "<img src=x" not in html
    assert "&lt;/title&gt;&lt;script&gt;x()&lt;/script&gt;" in html


def test_images_are_inline_data_uris_and_only_raster_types():
    html = page()
    assert f'src="data:image/png;base64,{sample.PNG}"' in section(html, "e-u1")
    entries = sample.entries()
    entries[2]["message"]["content"] = [
        {
            "type": "image",
            "mimeType": "image/svg+xml",
            "data": base64.b64encode(b"<svg onload=x()>").decode(),
        },
        {"type": "image", "mimeType": "image/png", "data": 'AAAA" onerror="x()'},
    ]
    html = render_html(sample.header(), entries)
    assert "data:image/svg" not in html and 'onerror="x()' not in html and "onerror=&quot;" not in html
    assert "image of type image/svg+xml not shown" in html
    assert "image with unreadable data not shown" in html


def test_markdown_images_become_links_so_nothing_is_fetched():
    entries = sample.entries()[:3]
    entries[2]["message"]["content"] = "look ![chart](https://example.com/track.png)"
    html = render_html(sample.header(), entries)
    assert "<img" not in section(html, "conversation")
    assert 'href="https://example.com/track.png"' in html
    assert not re.search(
        r'(src|href)="(https?:)?//', html.replace('href="https://example.com/track.png"', "")
    )
    assert "<link" not in html and "@import" not in html


def test_tool_calls_are_collapsible_with_their_results():
    html = page()
    assistant = section(html, "e-a1")
    calls = re.findall(r'<details class="tool"[^>]*>.*?</details>', assistant, re.S)
    assert len(calls) == 2
    bash, read = calls
    assert '<span class="tool-name">bash</span>' in bash and "ls -la src" in bash
    assert "total 8\napp.py" in bash  # the result, inside the same <details>
    assert '<span class="tool-name">read</span>' in read and "src/app.py" in read
    # The read result is the file: highlighted by its extension.
    assert '<span class="kn">import</span>' in read
    # The results' own elements are empty anchors (still reachable from the tree).
    assert section(html, "e-r1") == '<div class="entry anchor" id="e-r1"></div>'


def test_a_tool_result_without_its_call_and_errors_show_on_their_own():
    entries = [
        {
            "type": "message",
            "id": "r9",
            "parentId": None,
            "timestamp": "2026-12-02T09:00:00Z",
            "message": {
                "role": "toolResult",
                "toolCallId": "gone",
                "toolName": "edit",
                "content": [{"type": "text", "text": "no match"}],
                "isError": True,
            },
        }
    ]
    html = render_html(sample.header(), entries)
    element = section(html, "e-r9")
    assert '<details class="tool error">' in element and "no match" in element


def test_edit_and_write_calls_render_as_code():
    entries = sample.entries()[:4]
    entries[3]["message"]["content"] = [
        {
            "type": "toolCall",
            "id": "w",
            "name": "write",
            "arguments": {"path": "a.py", "content": "import sys\n"},
        },
        {
            "type": "toolCall",
            "id": "e",
            "name": "edit",
            "arguments": {"path": "a.py", "edits": [{"oldText": "sys", "newText": "os"}]},
        },
        {"type": "toolCall", "id": "x", "name": "my_tool", "arguments": {"q": "<b>"}},
    ]
    html = section(render_html(sample.header(), entries), "e-a1")
    assert '<span class="kn">import</span>' in html
    assert '<span class="gd">-sys</span>' in html and '<span class="gi">+os</span>' in html
    assert "&lt;b&gt;" in html and "<b>" not in html
    assert html.count("(no result recorded)") == 3


def test_markdown_code_is_highlighted_and_thinking_is_collapsible():
    assistant = section(page(), "e-a1")
    assert '<pre class="hl" data-lang="python"><code><span class="k">def</span>' in assistant
    assert '<details class="thinking"><summary>Thinking</summary>' in assistant
    assert "<strong>script</strong>" in assistant


def test_notes_for_settings_compaction_and_session_name():
    html = page()
    assert "Model: local-vllm/qwen3-coder" in section(html, "e-m0")
    assert "Thinking level: medium" in section(html, "e-t0")
    compaction = section(html, "e-c1")
    assert (
        '<details class="summary">' in compaction
        and "4242 tokens" in compaction
        and "<h2>Goal</h2>" in compaction
    )
    assert "Session named “Greeting script”" in section(html, "e-n1")
    assert "$ echo hi" in section(html, "e-b1")
    assert "<strong>tests</strong>" in section(html, "e-x1")


def test_the_page_is_self_contained_and_its_script_is_allowed_by_hash():
    html = page()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html).group(1)
    assert "default-src 'none'" in policy
    script = re.search(r"<script>(.*)</script>", html, re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in policy
    assert ".hl .k {" in html  # the pygments style is inlined


def test_entries_are_not_modified():
    entries = sample.entries()
    before = copy.deepcopy(entries)
    render_html(sample.header(), entries)
    assert entries == before


def test_odd_trees_keep_every_entry():
    def entry(entry_id, parent, second):
        return {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": f"2026-12-02T09:00:{second:02d}Z",
            "message": {"role": "user", "content": f"text {entry_id}"},
        }

    entries = [
        entry("a", None, 1),
        entry("b", "missing", 2),  # unknown parent: a root
        entry("c", "c", 3),  # its own parent: a root
        entry("d", "e", 4),  # d and e form a cycle
        entry("e", "d", 5),
        entry("a", "a", 6),  # a duplicate id gets a key of its own
        {"type": "mystery", "parentId": "a", "timestamp": "2026-12-02T09:00:07Z"},
        "not a dict",
    ]
    html = render_html(sample.header(), entries)
    keys = [key for key, _ in tree_items(html)]
    assert sorted(keys) == sorted(["a", "b", "c", "d", "e", "entry-6", "entry-7"])
    assert entry_ids(html, "conversation") == ["a", "entry-7"]
    assert "mystery entry" in section(html, "e-entry-7")


def test_an_empty_session_renders():
    html = render_html(sample.header(), [])
    assert "This session has no entries yet." in html
    assert entry_ids(html, "conversation") == []


def test_a_deep_linear_session_does_not_recurse():
    entries = [
        {
            "type": "message",
            "id": f"n{i}",
            "parentId": f"n{i - 1}" if i else None,
            "timestamp": "2026-12-02T09:00:00Z",
            "message": {"role": "user", "content": "x"},
        }
        for i in range(3000)
    ]
    html = render_html(sample.header(), entries)
    assert len(entry_ids(html, "conversation")) == 3000
    assert "--indent" not in section(html, "tree")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
FIELD = st.sampled_from(
    [
        "id",
        "parentId",
        "timestamp",
        "message",
        "role",
        "content",
        "type",
        "text",
        "thinking",
        "toolCall",
        "arguments",
        "name",
        "toolCallId",
        "data",
        "mimeType",
        "summary",
        "details",
        "label",
        "targetId",
        "sections",
        "toolsAdded",
        "toolsRemoved",
        "command",
        "output",
        "exitCode",
        "isError",
        "stopReason",
        "usage",
    ]
)
LOOSE = st.recursive(
    JSON
    | st.sampled_from(
        ["message", "user", "assistant", "toolResult", "system", "image", "toolCall", "a", "b"]
    ),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(FIELD, inner, max_size=6),
    max_leaves=20,
)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LOOSE, max_size=8), st.dictionaries(FIELD, JSON, max_size=4))
def test_any_json_renders_without_crashing(entries, header):
    html = render_html(header, entries)
    assert one_script_and_the_data(html)


def test_the_session_is_embedded_as_pi_embeds_it():
    """pi's page carries the session as base64 JSON in #session-data (header, entries, leafId);
    a reader of pi's exports finds the same there, and a context_edit shows its replacement."""
    import json

    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"}
    user = {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-01-01T00:00:01Z"}
    user["message"] = {"role": "user", "content": "hello", "timestamp": 1}
    edit = {"type": "context_edit", "id": "c1", "parentId": "u1", "timestamp": "2026-01-01T00:00:02Z"}
    edit.update(targetId="u1", replacement={"content": "a shorter hello"})
    html = render_html(header, [user, edit], extra={"systemPrompt": "be brief", "tools": []})
    data = json.loads(base64.b64decode(DATA_BLOCK.search(html).group(1)))
    assert data == {
        "header": header,
        "entries": [user, edit],
        "leafId": "c1",
        "systemPrompt": "be brief",
        "tools": [],
    }
    assert "a shorter hello" in html

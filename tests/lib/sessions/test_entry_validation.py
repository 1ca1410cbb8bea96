"""Every loaded entry is checked; an unusable one is skipped with one line naming file, line and
field, the file is never rewritten for it, and the session stays usable (issue 11, item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pi_session_jsonl import jsonl
from pi_session_jsonl.store import JsonlStore, fork_file

from pi_host.lib.sessions.store import MemoryStore
from pi_host.lib.sessions.validate import MAX_DEPTH, check_entries, entry_problem, field_problem
from pi_host.protocol import UserMessage
from tests.support.session_files import (
    assistant,
    entry,
    header,
    read_jsonl,
    roles,
    texts,
    tool_result,
    user,
    write_jsonl,
)


def _warnings() -> tuple[list[str], object]:
    seen: list[str] = []
    return seen, seen.append


def _with_message(record: dict, **fields) -> dict:
    return {**record, "message": {**record["message"], **fields}}


BASE = [header(), user("u1", None, "one"), assistant("a1", "u1", "two")]

# (bad entry as line 4, the field the warning names)
BAD_ENTRIES = {
    "list parentId": ({**user("u2", "a1", "three"), "parentId": ["a1"]}, "field parentId"),
    "dict parentId": ({**user("u2", "a1", "three"), "parentId": {"id": "a1"}}, "field parentId"),
    "int assistant content": (_with_message(assistant("a2", "a1", "x"), content=5), "field message.content"),
    "int branch summary": (entry("branch_summary", "b1", "a1", fromId="a1", summary=5), "field summary"),
    "int custom_message content": (
        entry("custom_message", "c1", "a1", customType="x", content=5, display=True),
        "field content",
    ),
    "list text block": (
        _with_message(user("u2", "a1", "x"), content=[{"type": "text", "text": ["a"]}]),
        "field message.content.0.text",
    ),
    "string usage number": (
        _with_message(assistant("a2", "a1", "x"), usage={"input": "5"}),
        "field message.usage.input",
    ),
    "tool result without call id": (
        {**tool_result("r1", "a1", "t1"), "message": {"role": "toolResult", "content": []}},
        "field message.toolCallId",
    ),
    "no id": ({k: v for k, v in user("u2", "a1", "x").items() if k != "id"}, "field id"),
    "context edit without replacement": (
        entry("context_edit", "e1", "a1", targetId="u1"),
        "field replacement",
    ),
    "model change without model": (entry("model_change", "m1", "a1", provider="faux"), "field modelId"),
    "second header": (header(session_id="other"), "field type"),
}


@pytest.mark.parametrize("case", sorted(BAD_ENTRIES))
def test_bad_entry_is_skipped_named_and_never_rewritten(tmp_path, case):
    bad, field = BAD_ENTRIES[case]
    path = write_jsonl(tmp_path / "s.jsonl", [*BASE, bad])
    original = path.read_bytes()
    seen, warn = _warnings()
    store = JsonlStore.open_file(str(path), warn=warn)
    assert [e["id"] for e in store.entries()] == ["u1", "a1"]
    [line] = seen
    assert line.startswith(f"{path}:4: skipped ") and field in line and "\n" not in line
    assert texts(store.build_context().messages) == ["one", "two"]
    assert store.close_interrupted_tool_calls() == []
    assert path.read_bytes() == original  # opening changed nothing
    added = store.append({"type": "message", "message": UserMessage(content="next").to_json()})
    store.close()
    assert added["parentId"] == "a1"
    assert path.read_bytes().startswith(original)
    again = JsonlStore.open_file(str(path), warn=lambda _line: None)
    assert texts(again.build_context().messages) == ["one", "two", "next"]
    again.close()


def test_children_of_a_skipped_entry_hang_from_its_parent(tmp_path):
    records = [
        header(),
        user("u1", None, "one"),
        _with_message(assistant("a1", "u1", "two"), content=5),  # skipped
        user("u2", "a1", "three"),
        assistant("a2", "u2", "four"),
    ]
    path = write_jsonl(tmp_path / "s.jsonl", records)
    seen, warn = _warnings()
    store = JsonlStore.open_file(str(path), warn=warn)
    assert store.get("u2")["parentId"] == "u1" and store.leaf_id() == "a2"
    assert texts(store.build_context().messages) == ["one", "three", "four"]
    assert [node.entry["id"] for node in store.get_tree()] == ["u1"]
    assert len(seen) == 1 and f"{path}:3:" in seen[0]
    store.close()
    assert read_jsonl(path)[3]["parentId"] == "a1"  # only in memory


def test_compaction_keeping_from_a_skipped_entry_keeps_from_where_it_stood():
    records = [
        user("u1", None, "one"),
        _with_message(assistant("a1", "u1", "two"), content=5),
        user("u2", "a1", "three"),
        assistant("a2", "u2", "four"),
        entry("compaction", "c1", "a2", summary="sum", firstKeptEntryId="a1", tokensBefore=9),
        user("u3", "c1", "five"),
    ]
    seen, warn = _warnings()
    store = MemoryStore(".", header=header(), entries=records, warn=warn)
    assert store.get("c1")["firstKeptEntryId"] == "u2"
    assert texts(store.build_context().messages) == ["sum", "three", "four", "five"]
    assert seen == ["entry 2: skipped message entry 'a1': field message.content: expected an array, got 5"]


def test_duplicate_ids_keep_the_first_and_garbage_does_not_steal_an_id():
    garbage = {"type": "message", "id": "u2", "parentId": None, "message": 5}
    records = [user("u1", None, "one"), garbage, user("u2", "u1", "two"), user("u2", "u1", "again")]
    seen: list[tuple[int, str]] = []
    checked = check_entries(records, lambda index, _entry, problem: seen.append((index, problem)))
    assert [e["message"]["content"][0]["text"] for e in checked.entries] == ["one", "two"]
    assert [index for index, _ in seen] == [1, 3] and "already used" in seen[1][1]


def test_skipped_entry_cycles_do_not_hang():
    records = [
        entry("custom", "x", "y", customType=5),
        entry("custom", "y", "x", customType=5),
        user("u1", "x", "one"),
    ]
    checked = check_entries(records, lambda *_: None)
    assert [e["id"] for e in checked.entries] == ["u1"] and checked.entries[0]["parentId"] is None


def test_problems_name_the_most_specific_field():
    _, problem = entry_problem(_with_message(user("u", None, "x"), content=[{"type": "bogus"}]))
    assert problem.startswith("field message.content.0:")
    _, problem = entry_problem(_with_message(assistant("a", None, "x"), stopReason="done"))
    assert problem.startswith("field message.stopReason:")
    _, problem = entry_problem(
        entry("compaction", "c", None, summary="s", systemMessage={"role": "system", "content": 3})
    )
    assert problem.startswith("field systemMessage.content:")
    assert field_problem(entry("label", "l", None, targetId="u1")) is None  # absent label clears
    assert field_problem(entry("session_info", "s", None, name=None)) is None
    assert field_problem({**entry("custom", "c", None), "timestamp": 17}) is None  # lenient like pi


def test_entries_nested_too_deep_are_skipped_but_bracket_rich_text_is_not(tmp_path):
    deep: object = 1
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    brackets = "{[" * 1000  # text full of brackets is no nesting
    records = [
        header(),
        user("u1", None, brackets),
        entry("custom", "d1", "u1", customType="x", data=deep),
        user("u2", "d1", "after"),
    ]
    path = write_jsonl(tmp_path / "s.jsonl", records)
    seen, warn = _warnings()
    store = JsonlStore.open_file(str(path), warn=warn)
    assert [e["id"] for e in store.entries()] == ["u1", "u2"]
    assert len(seen) == 1 and f"{path}:3:" in seen[0] and f"deeper than {MAX_DEPTH}" in seen[0]
    assert texts(store.build_context().messages) == [brackets, "after"]
    store.close()


def test_unparseably_deep_line_is_malformed_not_a_crash(tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", BASE)
    with open(path, "a") as handle:
        handle.write("[" * 100_000 + "]" * 100_000 + "\n")
        handle.write(
            '{"type":"custom","id":"x","parentId":"a1","data":' + "[" * 100_000 + "]" * 100_000 + "}\n"
        )
    seen, warn = _warnings()
    store = JsonlStore.open_file(str(path), warn=warn)
    assert [e["id"] for e in store.entries()] == ["u1", "a1"]
    assert seen == [f"{path}: skipped malformed line 4, 5 (truncated or corrupt write)"]
    store.close()


@pytest.mark.parametrize(
    ("version", "migrated"),
    [("3", False), (3.0, False), ("2", True), (None, True), ("three", False), ([3], False)],
)
def test_header_version_is_read_as_a_number(tmp_path, version, migrated):
    first = header() if version is None else {**header(), "version": version}
    if version is None:
        del first["version"]
    records = [first, user("u1", None, "one"), assistant("a1", "u1", "two"), user("u2", "u1", "branch")]
    path = write_jsonl(tmp_path / "s.jsonl", records)
    original = path.read_bytes()
    seen, warn = _warnings()
    store = JsonlStore.open_file(str(path), warn=warn)
    store.close()
    if version is None:  # v1: ids are replaced and the chain flattened, as pi does
        assert len(store.path()) == 3
        return
    assert [e["id"] for e in store.path()] == ["u1", "u2"]  # the tree is intact
    assert (path.read_bytes() == original) is not migrated
    if isinstance(version, list) or version == "three":
        assert seen == [
            f"{path}:1: header field version: expected a number, got {json.dumps(version)}; "
            "read as v3 (its entries have ids)"
        ]


def test_garbage_version_without_ids_is_read_as_v1(tmp_path):
    lines = [{**header(), "version": "x"}, {"type": "message", "message": {"role": "user", "content": "hi"}}]
    path = write_jsonl(tmp_path / "s.jsonl", lines)
    store = JsonlStore.open_file(str(path), warn=lambda _line: None)
    assert texts(store.build_context().messages) == ["hi"]
    store.close()
    assert read_jsonl(path)[0]["version"] == 3 and (tmp_path / "s.jsonl.v1.bak").exists()


def test_migration_keeps_unusable_entries_in_the_rewrite(tmp_path):
    records = [
        {**header(), "version": 2},
        entry("custom_message", "c1", None, customType="x", content=5, display=True),
        user("u1", "c1", "one"),
    ]
    path = write_jsonl(tmp_path / "s.jsonl", records)
    seen, warn = _warnings()
    store = JsonlStore.open_file(str(path), warn=warn)
    store.close()
    assert [line["id"] for line in read_jsonl(path)[1:]] == ["c1", "u1"]
    assert any(line.startswith(f"{path}:2: skipped custom_message entry 'c1'") for line in seen)


def test_fork_copies_entries_verbatim_and_skips_in_memory(tmp_path):
    bad = _with_message(assistant("a2", "a1", "x"), content=5)
    source = write_jsonl(tmp_path / "src.jsonl", [*BASE, bad, user("u2", "a2", "three")])
    seen, warn = _warnings()
    store = fork_file(str(source), str(tmp_path), str(tmp_path / "forks"), warn=warn)
    store.close()
    copied = read_jsonl(Path(store.session_file))
    assert copied[1:] == read_jsonl(source)[1:]
    assert texts(store.build_context().messages) == ["one", "two", "three"]
    assert len(seen) == 1 and seen[0].startswith(f"{store.session_file}:4: skipped message entry 'a2'")


def test_many_bad_entries_warn_a_bounded_number_of_lines(tmp_path):
    records = [*BASE, *(entry("custom", f"x{i}", "a1", customType=i) for i in range(100))]
    path = write_jsonl(tmp_path / "s.jsonl", records)
    seen, warn = _warnings()
    JsonlStore.open_file(str(path), warn=warn).close()
    assert len(seen) == 21 and "more unusable entries" in seen[-1]


def test_lone_surrogates_from_pi_load_and_reencode(tmp_path):
    path = tmp_path / "s.jsonl"
    lines = [json.dumps(header()), json.dumps(user("u1", None, "cut \ud83d emoji"))]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")  # escaped, as JSON.stringify writes it
    store = JsonlStore.open_file(str(path))
    assert texts(store.build_context().messages) == ["cut \ud83d emoji"]
    assert jsonl.parse_line(jsonl.encode(store.get("u1"))) == store.get("u1")
    store.close()
    assert jsonl.parse_line(b'{"a": NaN}') is None and jsonl.parse_line(b'{"a": 1e400}') is None


def test_pi_fixture_files_load_without_a_single_warning(tmp_path):
    from tests.support.session_files import FIXTURES

    for fixture in sorted(FIXTURES.glob("*.jsonl")):
        copy = tmp_path / fixture.name
        copy.write_bytes(fixture.read_bytes())
        seen, warn = _warnings()
        store = JsonlStore.open_file(str(copy), warn=warn)
        assert seen == [] and len(store.entries()) == len(read_jsonl(fixture)) - 1, fixture.name
        store.close()
        assert roles(store.build_context().messages)


def test_an_answer_without_a_model_name_restores_no_model():
    nameless = assistant("a2", "u2", "x")
    del nameless["message"]["provider"], nameless["message"]["model"]
    records = [
        entry("model_change", "m0", None, provider="faux", modelId="faux-1"),
        user("u2", "m0", "q"),
        nameless,
    ]
    store = MemoryStore(".", header=header(), entries=records, warn=lambda _line: None)
    assert len(store.entries()) == 3 and store.build_context().model is None  # not {None, None}


def test_messages_off_the_active_branch_are_checked_when_that_branch_is_used():
    # Only the leaf's context is parsed on load (a long session holds thousands of messages the
    # context never reads again); a bad message on another branch is reported once it is used.
    records = [
        user("u1", None, "one"),
        assistant("a1", "u1", "two"),
        _with_message(assistant("a2", "a1", "old branch"), content=5),
        user("u3", "a1", "new branch"),
    ]
    seen, warn = _warnings()
    store = MemoryStore(".", header=header(), entries=records, warn=warn)
    assert texts(store.build_context().messages) == ["one", "two", "new branch"]
    assert seen == []
    assert store.get("a2") is not None  # still in the tree (the tree view shows it)
    store.navigate("a2")
    assert texts(store.build_context().messages) == ["one", "two"]
    assert seen == ["entry 3: skipped message entry 'a2': field message.content: expected an array, got 5"]
    store.build_context()
    assert len(seen) == 1  # reported once


def test_a_bad_message_holding_an_id_gives_it_up_to_a_later_good_entry():
    records = [
        user("u1", None, "one"),
        _with_message(user("u2", "u1", "bad"), content=5),
        user("u2", "u1", "good"),
        assistant("a2", "u2", "answer"),
    ]
    seen, warn = _warnings()
    store = MemoryStore(".", header=header(), entries=records, warn=warn)
    assert texts(store.build_context().messages) == ["one", "good", "answer"]
    assert len(seen) == 1 and "entry 2: skipped message entry 'u2'" in seen[0]

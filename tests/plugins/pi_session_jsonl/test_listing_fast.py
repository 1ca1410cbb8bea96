"""The session picker's quick rows (``quick_rows.QuickScanner``, ``quick_list``) and what it reads
lazily (``tail_messages``, ``text_matches``): the same answers as ``session_info()``, which parses
every line, on files written by pi and pi-host, on damaged ones, and on lines longer than the
scanner's buffer."""

from __future__ import annotations

import json
import os
import random
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pi_session_jsonl import _list, listing, quick_rows
from pi_session_jsonl.paths import default_session_dir

from tests.support.paths import SESSION_FIXTURES

FIXTURES = SESSION_FIXTURES
T0 = 1_796_000_000_000  # ms


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class Writer:
    """A pi v3 session file built line by line (compact JSON, ``type`` first, as pi writes)."""

    def __init__(self, path: Path, cwd: str, start: int = T0, session_id: str = "s-1", **header) -> None:
        self.path, self.clock, self.parent, self.count = path, start, None, 0
        self.lines = [
            {"type": "session", "version": 3, "id": session_id, "timestamp": iso(start), "cwd": cwd, **header}
        ]

    def entry(self, kind: str, **fields) -> dict:
        self.clock += 1000
        self.count += 1
        entry = {
            "type": kind,
            "id": f"e{self.count:07x}",
            "parentId": self.parent,
            "timestamp": iso(self.clock),
            **fields,
        }
        self.parent = entry["id"]
        self.lines.append(entry)
        return entry

    def message(
        self, role: str, text: str | None = None, content=None, stamp: int | None = None, **extra
    ) -> dict:
        if content is None:
            content = [{"type": "text", "text": text}] if text is not None else []
        message = {
            "role": role,
            "content": content,
            "timestamp": stamp if stamp is not None else self.clock + 500,
            **extra,
        }
        return self.entry("message", message=message)

    def turn(self, prompt: str, answer: str, tool_output: str = "") -> None:
        self.message("user", prompt)
        if tool_output:
            self.message(
                "assistant", content=[{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}}]
            )
            self.message("toolResult", tool_output, toolCallId="c1", toolName="bash", isError=False)
        self.message("assistant", answer)

    def write(self, raw: bytes | None = None) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = b"".join(
            json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
            for line in self.lines
        )
        self.path.write_bytes(data if raw is None else raw)
        return self.path


def same(path: Path, chunk: int = quick_rows.QUICK_CHUNK) -> listing.SessionInfo | None:
    """The quick row of ``path``, checked against session_info()'s."""
    scanner = quick_rows.QuickScanner(warn=lambda line: None, chunk=chunk)
    quick = scanner.scan(str(path))
    full = listing.session_info(str(path), warn=lambda line: None)
    for info in (quick, full):
        if info is not None:
            info.all_messages_text = ""  # quick rows leave it out (when the scan vouched for the file)
    assert quick == full
    return quick


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.jsonl")))
def test_rows_of_files_written_by_pi_are_session_infos(name):
    info = same(FIXTURES / name)
    assert info is not None and info.message_count > 3 and info.first_message != "(no messages)"


def test_rows_of_a_file_written_by_pi_host_are_session_infos(tmp_path, isolated_environment):
    from pi_session_jsonl.store import JsonlStore

    from pi_host.protocol.messages import AssistantMessage, TextContent, UserMessage

    store = JsonlStore.create(str(isolated_environment["work"]), str(tmp_path))
    store.append_message(UserMessage(content=[TextContent(text="hello from pi-host")], timestamp=T0))
    store.append_message(
        AssistantMessage(content=[TextContent(text="hi")], timestamp=T0 + 5, api="x", provider="x", model="x")
    )
    store.set_name("  named here ")
    store.close()
    info = same(Path(store.session_file))
    assert (info.first_message, info.name, info.message_count) == ("hello from pi-host", "named here", 2)


def test_count_name_first_message_and_modified(tmp_path):
    writer = Writer(tmp_path / "a.jsonl", "/p")
    writer.entry("model_change", provider="loop", modelId="loop-1")
    writer.message("system", "")
    writer.message("user", content=[{"type": "image", "data": "AAAA", "mimeType": "image/png"}])  # no text
    writer.entry("session_info", name="first name")
    writer.turn("the first words", "an answer", tool_output="x" * 5000)
    writer.entry("session_info", name="  the latest name ")
    writer.message("user", "later", stamp=T0 + 999_000)
    writer.message(
        "toolResult", "a result written after the last answer", toolCallId="c", toolName="bash", isError=False
    )
    info = same(writer.write())
    assert info.message_count == 8  # every message entry, system and tool results too
    assert info.first_message == "the first words"
    assert info.name == "the latest name"
    assert info.modified == datetime.fromtimestamp((T0 + 999_000) / 1000, UTC)
    assert info.created == datetime.fromtimestamp(T0 / 1000, UTC)


def test_an_empty_name_clears_it_and_a_session_without_messages_dates_from_its_header(tmp_path):
    writer = Writer(tmp_path / "a.jsonl", "/p")
    writer.entry("session_info", name="named")
    writer.entry("session_info", name="")
    info = same(writer.write())
    assert (info.name, info.message_count, info.first_message) == (None, 0, "(no messages)")
    assert info.modified == datetime.fromtimestamp(T0 / 1000, UTC)


def test_lines_longer_than_the_buffer(tmp_path):
    writer = Writer(tmp_path / "a.jsonl", "/p")
    writer.turn("p" * 20_000, "a" * 30_000, tool_output="o" * 50_000)  # the first user line alone is long
    writer.entry("session_info", name="n" * 9000)
    writer.turn("second", "b" * 17_000)
    path = writer.write()
    for chunk in (4096, 5000, 8192, 65536):
        assert same(path, chunk).message_count == 6


def test_a_file_the_scan_cannot_vouch_for_is_parsed_whole(tmp_path):
    writer = Writer(tmp_path / "a.jsonl", "/p")
    writer.turn("hello", "there")
    data = writer.write().read_bytes()
    cases = {
        "spaced.jsonl": b"\n".join(json.dumps(json.loads(line)).encode() for line in data.splitlines())
        + b"\n",
        "crlf.jsonl": data.replace(b"\n", b"\r\n"),
        "torn.jsonl": data + b'{"type":"message","id":"x","parentId":"e0000002","timestamp":"2026',
        "blank-and-junk.jsonl": b"\n[1,2]\n" + data,
        "keys-reordered.jsonl": data.replace(b'{"type":"message","id"', b'{"id"', 1).replace(
            b'{"id":"e0000001",', b'{"id":"e0000001","type":"message",', 1
        ),
    }
    for name, raw in cases.items():
        path = tmp_path / name
        path.write_bytes(raw)
        scanner = quick_rows.QuickScanner(warn=lambda line: None)
        assert scanner.scan(str(path)) is not None, name
        assert scanner.full_parses == 1, name
        same(path)


def test_damaged_files_are_skipped_with_a_note_and_a_fifo_is_never_opened(tmp_path):
    agent, cwd = tmp_path / "agent", "/home/dev/kite"
    directory = Path(default_session_dir(str(agent), cwd))
    Writer(directory / "good.jsonl", cwd).write()
    (directory / "not-a-session.jsonl").write_text('{"hello":"world"}\n')
    (directory / "garbage.jsonl").write_bytes(b"\x00\xff{{{\n")
    (directory / "empty.jsonl").write_bytes(b"")
    (directory / "folder.jsonl").mkdir()
    os.mkfifo(directory / "pipe.jsonl")
    (directory / "unreadable.jsonl").write_text("{}")
    os.chmod(directory / "unreadable.jsonl", 0)
    notes: list[str] = []
    result: list = []
    worker = threading.Thread(
        target=lambda: result.append(quick_rows.quick_list(cwd, str(agent), warn=notes.append))
    )
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "the listing blocked (on the FIFO?)"
    [rows] = result
    assert [row.path for row in rows] == [str(directory / "good.jsonl")]
    skipped = {line.split(": ", 1)[0].removeprefix("skipped ") for line in notes}
    expected = {"not-a-session", "garbage", "empty", "folder", "pipe"}
    if os.geteuid() != 0:  # root reads a file whatever its mode
        expected.add("unreadable")
    assert {Path(path).stem for path in skipped} >= expected
    assert any("FIFO" in line for line in notes)


def test_quick_list_is_newest_first_reports_progress_and_can_stop(tmp_path):
    agent, cwd = tmp_path / "agent", str(tmp_path / "work")
    directory = Path(default_session_dir(str(agent), cwd))
    for index in range(100):
        writer = Writer(
            directory / f"{index:03d}.jsonl", cwd, start=T0 + index * 60_000, session_id=f"id-{index}"
        )
        writer.turn(f"prompt {index}", "answer")
        path = writer.write()
        os.utime(path, (T0 / 1000 + index * 60, T0 / 1000 + index * 60))
    calls: list[tuple[int, int, list[str]]] = []

    def progress(done, total, rows):
        calls.append((done, total, [row.id for row in rows]))

    rows = quick_rows.quick_list(cwd, str(agent), progress=progress)
    assert [row.id for row in rows] == [f"id-{index}" for index in reversed(range(100))]
    assert calls[0][0] == quick_rows.FIRST_BATCH and calls[-1][:2] == (100, 100)
    assert calls[0][2][:3] == ["id-99", "id-98", "id-97"]  # the newest files are read first
    assert sum(len(ids) for _, _, ids in calls) == 100
    stopped = quick_rows.quick_list(cwd, str(agent), progress=lambda done, total, rows: False)
    assert len(stopped) == quick_rows.FIRST_BATCH
    # the factory's option
    assert [row.id for row in _list(cwd, str(agent), quick=True)] == [row.id for row in rows]


def test_a_shared_session_dir_lists_this_cwd_only_unless_all(tmp_path):
    shared = tmp_path / "shared"
    Writer(shared / "mine.jsonl", str(tmp_path / "mine"), session_id="mine").write()
    Writer(shared / "theirs.jsonl", str(tmp_path / "theirs"), session_id="theirs").write()
    mine = quick_rows.quick_list(str(tmp_path / "mine"), str(tmp_path / "agent"), str(shared))
    assert [row.id for row in mine] == ["mine"]
    every = quick_rows.quick_list(str(tmp_path / "mine"), str(tmp_path / "agent"), str(shared), all_dirs=True)
    assert sorted(row.id for row in every) == ["mine", "theirs"]


def test_random_sessions_agree_with_session_info(tmp_path):
    rng = random.Random(5)
    for case in range(60):
        writer = Writer(tmp_path / f"{case}.jsonl", "/p", start=T0 + rng.randrange(10**9))
        for _ in range(rng.randrange(0, 12)):
            kind = rng.random()
            if kind < 0.15:
                writer.entry("session_info", name=rng.choice(["", "x", " café ✓ ", "long " * 50]))
            elif kind < 0.25:
                writer.entry("custom", customType="ext", data={"type": "message", "text": "nested"})
            else:
                writer.turn(
                    rng.choice(["", "hi", "日本語", "q" * rng.randrange(1, 9000)]),
                    rng.choice(["", "ok", "a" * rng.randrange(1, 9000)]),
                    tool_output="t" * rng.randrange(0, 20000),
                )
        path = writer.write()
        for chunk in (4096, 16384, quick_rows.QUICK_CHUNK):
            same(path, chunk)


def test_tail_messages_reads_the_last_texts_from_the_end(tmp_path):
    writer = Writer(tmp_path / "a.jsonl", "/p")
    for index in range(30):
        writer.turn(f"question {index}", f"answer {index}\nsecond line", tool_output="z" * 3000)
    writer.message("user", content=[{"type": "image", "data": "AA", "mimeType": "image/png"}])
    path = writer.write()
    for block in (100, 4096, 64 * 1024):
        assert quick_rows.tail_messages(str(path), 3, block=block) == [
            ("assistant", "answer 28\nsecond line"),
            ("user", "question 29"),
            ("assistant", "answer 29\nsecond line"),
        ]
    assert quick_rows.tail_messages(str(tmp_path / "missing.jsonl")) == []
    info = listing.session_info(str(path))
    assert info.last_messages(1) == [("assistant", "answer 29\nsecond line")]


def test_text_matches_is_a_search_of_session_infos_message_text(tmp_path):
    writer = Writer(tmp_path / "a.jsonl", "/p")
    writer.turn(
        "Where is the PARSER?", "In   src/parse.py,\nnext to the lexer", tool_output="only-in-a-tool-result"
    )
    writer.turn("Café au lait", 'say "quoted" \\ back')
    writer.entry("custom", customType="x", data={"text": "only-in-custom-data"})
    path = str(writer.write())
    text = " ".join(listing.session_info(path).all_messages_text.lower().split())
    for needles, expected in [
        (["parser"], True),
        (["parser", "lexer"], True),
        (["src/parse.py,"], True),
        (["parse.py, next"], True),  # a phrase across a line break
        (["lexer café"], True),  # a phrase across two messages, as the joined text reads
        (["café"], True),
        (['"quoted"'], True),
        (["\\"], True),
        (["only-in-a-tool-result"], False),
        (["only-in-custom-data"], False),
        (["parser", "absent"], False),
        (["type"], False),  # a JSON key, not text
    ]:
        assert quick_rows.text_matches(path, needles) is expected, needles
        assert all(needle in text for needle in needles) is expected, needles


@pytest.mark.parametrize("chunk", [1, 2, 7, 64, 1 << 20])
def test_lines_split_files_like_bytes_split(tmp_path, chunk):
    data = b"a\n\nbbb\n" + b"c" * 200 + b"\nd\n" + b"e" * 70
    path = tmp_path / "f"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        lines = [bytes(part[start:end]) for part, start, end in quick_rows._lines(fd, chunk)]
    finally:
        os.close(fd)
    assert lines == data.split(b"\n")


def test_rename_appends_a_session_info_entry(tmp_path):
    writer = Writer(tmp_path / "a.jsonl", "/p")
    writer.turn("hello", "there")
    path = writer.write()
    [row] = [quick_rows.QuickScanner().scan(str(path))]
    assert row.rename("  a new\nname ") == "a new name"
    assert row.name == "a new name"
    assert listing.session_info(str(path)).name == "a new name"
    last = json.loads(path.read_text().splitlines()[-1])
    assert last["type"] == "session_info" and last["parentId"] == writer.parent


def test_a_second_listing_reads_only_the_files_that_changed(tmp_path, monkeypatch):
    agent, cwd = tmp_path / "agent", str(tmp_path / "work")
    directory = Path(default_session_dir(str(agent), cwd))
    paths = []
    for index in range(3):
        writer = Writer(directory / f"{index}.jsonl", cwd, session_id=f"id-{index}")
        writer.turn(f"prompt {index}", "answer")
        paths.append(writer.write())
    quick_rows.quick_list(cwd, str(agent))
    scanned: list[str] = []
    original = quick_rows.QuickScanner.scan

    def counting(self, path, mode=None):
        scanned.append(path)
        return original(self, path, mode)

    monkeypatch.setattr(quick_rows.QuickScanner, "scan", counting)
    rows = quick_rows.quick_list(cwd, str(agent))
    assert scanned == [] and len(rows) == 3
    rows[0].name = "changed by the caller"  # rows are copies: the next listing is not affected
    with paths[1].open("a") as handle:
        handle.write(
            json.dumps(
                {"type": "session_info", "id": "x1", "parentId": None, "timestamp": iso(T0), "name": "new"}
            )
            + "\n"
        )
    rows = {row.id: row for row in quick_rows.quick_list(cwd, str(agent))}
    assert scanned == [str(paths[1])]
    assert rows["id-1"].name == "new" and {rows["id-0"].name, rows["id-2"].name} == {None}

"""The export's own tolerant reader and export_session_file's paths and errors (in process)."""

from __future__ import annotations

import json

import pytest

from pi_host.lib.export import ExportError, default_destination, export_session_file
from pi_host.lib.export.reader import read_session
from tests.support import export_sample as sample
from tests.support.html_dom import entry_ids


def test_malformed_lines_are_skipped_and_the_first_is_named(tmp_path):
    path = tmp_path / "s.jsonl"
    lines = [
        json.dumps(sample.header()),
        "{torn",
        *(json.dumps(e) for e in sample.entries()),
        "[1, 2]",
        '{"type":"mess',
    ]
    path.write_text("\n".join(lines), encoding="utf-8")  # no final newline: the fragment is a torn write
    session = read_session(str(path))
    assert session.skipped == [2, 17, 18]
    assert [e["id"] for e in session.entries] == [e["id"] for e in sample.entries()]
    warnings: list[str] = []
    written = export_session_file(str(path), str(tmp_path / "out.html"), warn=warnings.append)
    assert warnings == [f"{path}: skipped 3 malformed lines (first: line 2)"]
    assert entry_ids((tmp_path / "out.html").read_text(), "conversation")[-1] == "x1"
    assert written == str(tmp_path / "out.html")


def test_junk_before_the_header_is_skipped_like_pi(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text("garbage\n" + json.dumps(sample.header()) + "\n", encoding="utf-8")
    assert read_session(str(path)).skipped == [1]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "the file is empty"),
        ("\n\n", "the file is empty"),
        ("hello\n", "no session header (line 1 is malformed)"),
        ('{"type":"message","id":"x"}\n', "line 1 is not a session header"),
        ('{"type":"session"}\n', "line 1 is not a session header"),
    ],
)
def test_files_that_are_not_sessions_are_refused(tmp_path, text, reason):
    path = tmp_path / "s.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ExportError) as caught:
        read_session(str(path))
    assert str(caught.value) == f"cannot export {path}: not a pi session file: {reason}"


def test_old_files_get_ids_parents_and_the_custom_role(tmp_path):
    path = tmp_path / "v1.jsonl"
    old = [
        {"type": "session", "id": "old", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/x"},
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:01Z",
            "message": {"role": "user", "content": "hi"},
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:02Z",
            "message": {"role": "hookMessage", "customType": "h", "content": "x"},
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in old), encoding="utf-8")
    entries = read_session(str(path)).entries
    assert [(e["id"], e["parentId"]) for e in entries] == [("line-1", None), ("line-2", "line-1")]
    assert entries[1]["message"]["role"] == "custom"


def test_the_default_destination_is_pi_s_name_in_the_current_directory(tmp_path, monkeypatch):
    source = sample.write(tmp_path / "2026-12-02T09-14-03-512Z_abc.jsonl")
    monkeypatch.chdir(tmp_path / "..")
    assert default_destination(str(source)) == "pi-session-2026-12-02T09-14-03-512Z_abc.html"
    assert default_destination("notes.txt") == "pi-session-notes.txt.html"
    written = export_session_file(str(source), None)
    assert written == "pi-session-2026-12-02T09-14-03-512Z_abc.html"
    assert (tmp_path / ".." / written).is_file()


def test_a_directory_destination_gets_the_default_name_inside(tmp_path):
    source = sample.write(tmp_path / "s.jsonl")
    out = tmp_path / "out"
    out.mkdir()
    assert export_session_file(str(source), str(out)) == str(out / "pi-session-s.html")


def test_errors_are_sentences_naming_the_path(tmp_path):
    source = sample.write(tmp_path / "s.jsonl")
    with pytest.raises(ExportError, match="no such file"):
        export_session_file(str(tmp_path / "missing.jsonl"), None)
    with pytest.raises(ExportError, match="it is a directory"):
        export_session_file(str(tmp_path), None)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ExportError, match=f"cannot write {blocker}/out.html: Not a directory"):
        export_session_file(str(source), str(blocker / "out.html"))
    with pytest.raises(ExportError, match="is the session file itself"):
        export_session_file(str(source), str(source))
    assert source.read_text().startswith('{"type": "session"')

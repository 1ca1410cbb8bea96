"""The page is UTF-8 clean whatever the session holds, and written whole or not at all."""

from __future__ import annotations

import os
import stat

import pytest

from pi_host.lib.export import ExportError, export_session_file, render_html, write_page
from tests.support import export_sample as sample


def test_a_lone_surrogate_in_any_entry_renders_as_a_replacement_character():
    entries = sample.entries()
    entries.append(
        {
            "type": "message",
            "id": "s1",
            "parentId": "x1",
            "timestamp": "2026-12-02T09:15:00.000Z",
            "message": {"role": "user", "content": "cut \ud83d emoji \U0001f600", "timestamp": 1},
        }
    )
    entries.append({"type": "custom", "id": "k1", "parentId": "s1", "customType": "\udfff", "data": {}})
    page = render_html(sample.header(), entries)
    page.encode("utf-8")  # strict
    assert "cut \ufffd emoji \U0001f600" in page


def test_a_symlinked_destination_is_written_through(tmp_path):
    real = tmp_path / "real.html"
    real.write_text("old")
    link = tmp_path / "link.html"
    link.symlink_to(real)
    write_page(str(link), "<p>new \ud800</p>")
    assert link.is_symlink()
    assert real.read_text(encoding="utf-8") == "<p>new \ufffd</p>"


def test_an_existing_file_keeps_its_mode_and_no_temporary_file_is_left(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "page.html"
    target.write_text("old")
    target.chmod(0o640)
    write_page(str(target), "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert os.listdir(folder) == ["page.html"]


def test_a_new_file_gets_the_mode_open_would_give_it(tmp_path):
    reference = tmp_path / "reference"
    reference.write_text("")
    write_page(str(tmp_path / "page.html"), "x")
    assert stat.S_IMODE((tmp_path / "page.html").stat().st_mode) == stat.S_IMODE(reference.stat().st_mode)


def test_a_missing_directory_is_one_sentence_and_nothing_is_written(tmp_path):
    source = sample.write(tmp_path / "s.jsonl")
    with pytest.raises(ExportError, match=r"^cannot write .*/missing/out\.html: No such file or directory$"):
        export_session_file(str(source), str(tmp_path / "missing" / "out.html"))

"""@file arguments and first-prompt composition (reference §8.8)."""

from __future__ import annotations

import base64

import pytest

from pi_host.cli.input import InputFileError, compose_prompt

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def test_text_file_is_inlined_with_absolute_name(tmp_path):
    (tmp_path / "notes.txt").write_text("line one\nline two")
    text, images, rest = compose_prompt(["@notes.txt", "Summarise"], None, str(tmp_path))
    path = tmp_path / "notes.txt"
    assert text == f'<file name="{path}">\nline one\nline two\n</file>\nSummarise'
    assert images == [] and rest == []


def test_stdin_then_files_then_first_message_without_separators(tmp_path):
    (tmp_path / "a.md").write_text("A")
    (tmp_path / "b.md").write_text("B")
    text, _images, rest = compose_prompt(
        ["@a.md", "first", "@b.md", "second", "third"], "piped\n", str(tmp_path)
    )
    assert text == (
        f'piped\n<file name="{tmp_path / "a.md"}">\nA\n</file>\n<file name="{tmp_path / "b.md"}">\nB\n</file>\nfirst'
    )
    assert rest == ["second", "third"]


def test_image_is_attached_by_content_not_name(tmp_path):
    (tmp_path / "shot.txt").write_bytes(PNG)
    text, images, _ = compose_prompt(["@shot.txt"], None, str(tmp_path))
    assert text == f'<file name="{tmp_path / "shot.txt"}"></file>\n'
    assert len(images) == 1 and images[0].mime_type == "image/png"
    assert base64.b64decode(images[0].data) == PNG


def test_empty_file_is_skipped(tmp_path):
    (tmp_path / "empty.txt").write_text("")
    text, images, rest = compose_prompt(["@empty.txt", "go"], None, str(tmp_path))
    assert (text, images, rest) == ("go", [], [])


def test_missing_file_is_an_error_naming_the_path(tmp_path):
    with pytest.raises(InputFileError) as info:
        compose_prompt(["@nope.txt", "go"], None, str(tmp_path))
    assert str(tmp_path / "nope.txt") in str(info.value)


def test_directory_is_an_error(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(InputFileError):
        compose_prompt(["@d"], None, str(tmp_path))


def test_absolute_and_home_paths(tmp_path, isolated_environment):
    home = isolated_environment["home"]
    (home / "h.txt").write_text("H")
    text, _, _ = compose_prompt(["@~/h.txt"], None, str(tmp_path))
    assert f'<file name="{home / "h.txt"}">' in text


def test_lone_at_sign_is_a_message(tmp_path):
    assert compose_prompt(["@"], None, str(tmp_path)) == ("@", [], [])


def test_text_starting_with_bm_is_text(tmp_path):
    (tmp_path / "notes.txt").write_text("BMW service notes, written over several lines")
    text, images, _ = compose_prompt(["@notes.txt"], None, str(tmp_path))
    assert images == [] and "BMW service notes" in text


def test_large_image_is_resized_with_a_hint(tmp_path):
    pil = pytest.importorskip("PIL.Image")
    pil.new("RGB", (3000, 1500), (200, 10, 10)).save(tmp_path / "big.png")
    text, images, _ = compose_prompt(["@big.png"], None, str(tmp_path))
    assert len(images) == 1
    assert "Image resized from 3000x1500 to 2000x1000" in text
    assert text.startswith(f'<file name="{tmp_path / "big.png"}">[') and text.endswith("]</file>\n")


def test_auto_resize_off_sends_the_original(tmp_path):
    pil = pytest.importorskip("PIL.Image")
    pil.new("RGB", (2100, 10)).save(tmp_path / "wide.png")
    original = (tmp_path / "wide.png").read_bytes()
    text, images, _ = compose_prompt(["@wide.png"], None, str(tmp_path), auto_resize=False)
    assert base64.b64decode(images[0].data) == original
    assert text == f'<file name="{tmp_path / "wide.png"}"></file>\n'

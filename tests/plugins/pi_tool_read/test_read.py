"""read: text paging and truncation notices, images by magic bytes, binary refusal, paths."""

from __future__ import annotations

import base64
import io
import os

import pi_tool_read
import pytest

from pi_host.protocol import ImageContent
from tests.support.tools import run, run_error, text_of

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.fixture
def tool():
    return pi_tool_read.create_tool()


def write_lines(path, count: int, width: int = 0) -> None:
    path.write_text("".join(f"line {i}{'x' * width}\n" for i in range(1, count + 1)))


async def test_text_returned_without_line_numbers(tool, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    result = await run(tool, {"path": "a.txt"}, str(tmp_path))
    assert text_of(result).startswith("alpha\nbeta")
    assert "1" not in text_of(result)
    assert result.details is None
    assert result.structured_content == text_of(result)


async def test_2000_line_limit_points_at_offset_2001(tool, tmp_path):
    write_lines(tmp_path / "big.txt", 2500)
    result = await run(tool, {"path": "big.txt"}, str(tmp_path))
    text = text_of(result)
    body, notice = text.split("\n\n[")
    assert body.splitlines()[-1] == "line 2000"
    assert len(body.splitlines()) == 2000
    assert "1-2000 of 2501" in notice and "offset=2001" in notice
    truncation = result.details["truncation"]
    assert truncation["truncatedBy"] == "lines" and truncation["outputLines"] == 2000


async def test_exactly_2000_lines_has_no_notice(tool, tmp_path):
    write_lines(tmp_path / "a.txt", 2000)
    result = await run(tool, {"path": "a.txt"}, str(tmp_path))
    assert "[" not in text_of(result)
    assert result.details is None


async def test_byte_limit_notice_names_50kb(tool, tmp_path):
    write_lines(tmp_path / "wide.txt", 1000, width=100)
    result = await run(tool, {"path": "wide.txt"}, str(tmp_path))
    text = text_of(result)
    assert "50.0KB" in text
    shown = len(text.split("\n\n[")[0].splitlines())
    assert f"offset={shown + 1}" in text
    assert len(text.split("\n\n[")[0].encode()) <= 51200
    assert result.details["truncation"]["truncatedBy"] == "bytes"


async def test_offset_and_limit_with_remaining_notice(tool, tmp_path):
    write_lines(tmp_path / "a.txt", 100)
    result = await run(tool, {"path": "a.txt", "offset": 10, "limit": 3}, str(tmp_path))
    text = text_of(result)
    assert text.startswith("line 10\nline 11\nline 12\n\n[")
    assert "89 more lines" in text and "offset=13" in text


async def test_limit_reaching_end_has_no_notice(tool, tmp_path):
    write_lines(tmp_path / "a.txt", 10)
    result = await run(tool, {"path": "a.txt", "offset": 8, "limit": 5}, str(tmp_path))
    assert text_of(result) == "line 8\nline 9\nline 10\n"  # the trailing newline is kept


async def test_offset_beyond_end_is_an_error_with_line_count(tool, tmp_path):
    write_lines(tmp_path / "a.txt", 10)
    message = await run_error(tool, {"path": "a.txt", "offset": 50}, str(tmp_path))
    # pi counts the empty line after the final newline: 10 written lines are 11
    assert "beyond the end" in message and "11 lines" in message


async def test_empty_file_has_one_line(tool, tmp_path):
    (tmp_path / "empty.txt").write_text("")
    result = await run(tool, {"path": "empty.txt"}, str(tmp_path))
    assert text_of(result) == ""
    message = await run_error(tool, {"path": "empty.txt", "offset": 2}, str(tmp_path))
    assert "1 lines" in message


async def test_first_line_over_limit_suggests_sed(tool, tmp_path):
    (tmp_path / "min.js").write_text("z" * 70_000 + "\nshort\n")
    result = await run(tool, {"path": "min.js"}, str(tmp_path))
    text = text_of(result)
    assert "z" not in text
    assert "Line 1 is 68.4KB" in text
    assert "sed -n '1p' min.js | head -c 51200" in text
    assert result.details["truncation"]["firstLineExceedsLimit"] is True


async def test_utf8_multibyte_lines_are_not_split(tool, tmp_path):
    # 3-byte characters: the byte cap falls inside a line; that whole line is dropped.
    (tmp_path / "u.txt").write_text(("€" * 1000 + "\n") * 40, encoding="utf-8")
    result = await run(tool, {"path": "u.txt"}, str(tmp_path))
    body = text_of(result).split("\n\n[")[0]
    assert "\ufffd" not in body
    assert all(line == "€" * 1000 for line in body.splitlines())
    assert len(body.splitlines()) == 17  # 17 * 3001 - 1 <= 51200 < 18 * 3001 - 1


async def test_png_detected_by_magic_bytes_despite_txt_name(tool, tmp_path):
    (tmp_path / "picture.txt").write_bytes(PNG_1X1)
    result = await run(tool, {"path": "picture.txt"}, str(tmp_path))
    assert isinstance(result.content[1], ImageContent)
    assert result.content[1].mime_type == "image/png"
    assert "image/png" in text_of(result)
    assert result.structured_content["type"] == "image"
    assert base64.b64decode(result.content[1].data) == PNG_1X1


async def test_text_named_png_is_read_as_text(tool, tmp_path):
    (tmp_path / "fake.png").write_text("just text\n")
    result = await run(tool, {"path": "fake.png"}, str(tmp_path))
    assert len(result.content) == 1
    assert text_of(result).startswith("just text")


@pytest.mark.parametrize(
    ("fmt", "mime"), [("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")]
)
async def test_other_formats_by_magic(tool, tmp_path, fmt, mime):
    image_module = pytest.importorskip("PIL.Image")
    buffer = io.BytesIO()
    image_module.new("RGB", (8, 8), "red").save(buffer, fmt)
    (tmp_path / "img.bin").write_bytes(buffer.getvalue())
    result = await run(tool, {"path": "img.bin"}, str(tmp_path))
    assert result.content[1].mime_type == mime


async def test_bmp_is_converted_to_png(tool, tmp_path):
    image_module = pytest.importorskip("PIL.Image")
    buffer = io.BytesIO()
    image_module.new("RGB", (4, 4), "blue").save(buffer, "BMP")
    (tmp_path / "x.bmp").write_bytes(buffer.getvalue())
    result = await run(tool, {"path": "x.bmp"}, str(tmp_path))
    assert result.content[1].mime_type in ("image/png", "image/jpeg")
    assert "image/bmp" in text_of(result)


async def test_large_image_downscaled_to_2000px(tool, tmp_path):
    image_module = pytest.importorskip("PIL.Image")
    buffer = io.BytesIO()
    image_module.new("RGB", (4000, 1000), "green").save(buffer, "PNG")
    (tmp_path / "wide.png").write_bytes(buffer.getvalue())
    result = await run(tool, {"path": "wide.png"}, str(tmp_path))
    data = base64.b64decode(result.content[1].data)
    with image_module.open(io.BytesIO(data)) as sent:
        assert sent.size == (2000, 500)
    assert "4000x1000" in text_of(result) and "2.00" in text_of(result)


async def test_auto_resize_setting_off_keeps_original(tool, tmp_path):
    image_module = pytest.importorskip("PIL.Image")
    buffer = io.BytesIO()
    image_module.new("RGB", (2500, 10), "green").save(buffer, "PNG")
    (tmp_path / "wide.png").write_bytes(buffer.getvalue())
    result = await run(tool, {"path": "wide.png"}, str(tmp_path), settings={"images": {"autoResize": False}})
    assert base64.b64decode(result.content[1].data) == buffer.getvalue()


async def test_binary_file_refused(tool, tmp_path):
    (tmp_path / "blob.dat").write_bytes(b"\x00\x01\x02ELF\x00" * 100)
    message = await run_error(tool, {"path": "blob.dat"}, str(tmp_path))
    assert "binary" in message


async def test_missing_file_and_directory_errors(tool, tmp_path):
    message = await run_error(tool, {"path": "nope.txt"}, str(tmp_path))
    assert "nope.txt" in message and "ENOENT" in message
    (tmp_path / "d").mkdir()
    message = await run_error(tool, {"path": "d"}, str(tmp_path))
    assert "directory" in message


async def test_path_variants_are_retried(tool, tmp_path):
    (tmp_path / "Shot at 10.00.00\u202fPM.txt").write_text("screenshot name\n")
    (tmp_path / "Bob\u2019s.txt").write_text("curly\n")
    assert text_of(await run(tool, {"path": "@Shot at 10.00.00 PM.txt"}, str(tmp_path))).startswith(
        "screenshot"
    )
    assert text_of(await run(tool, {"path": "Bob's.txt"}, str(tmp_path))).startswith("curly")


async def test_huge_file_read_near_end_streams(tool, tmp_path):
    path = tmp_path / "huge.log"
    with open(path, "w") as handle:
        for start in range(0, 300_000, 10_000):
            handle.write("".join(f"row {i}\n" for i in range(start, start + 10_000)))
    result = await run(tool, {"path": str(path), "offset": 299_998}, str(tmp_path))
    assert text_of(result) == "row 299997\nrow 299998\nrow 299999\n"
    assert os.path.getsize(path) > 2_000_000


async def test_special_files_refused(tool, tmp_path):
    os.mkfifo(tmp_path / "pipe")
    message = await run_error(tool, {"path": "pipe"}, str(tmp_path))
    assert "not a regular file" in message

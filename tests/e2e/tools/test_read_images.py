"""read: text paging and truncation notices, images by magic bytes, binary refusal, paths."""

from __future__ import annotations

import base64

import pi_tool_read
import pytest

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.fixture
def tool():
    return pi_tool_read.create_tool()


def test_images_without_pillow_pass_through_or_are_omitted(tmp_path):
    # A child interpreter where Pillow cannot be imported, as when the 'images' extra is absent.
    import subprocess
    import sys

    small = tmp_path / "small.png"
    small.write_bytes(PNG_1X1)
    big = tmp_path / "big.png"
    big.write_bytes(PNG_1X1[:16] + b"\0" * (5 * 1024 * 1024))
    script = (
        "import sys, asyncio; sys.modules['PIL'] = None\n"
        "from pi_host.protocol.abort import AbortController\n"
        "from pi_host.loop.tools import ToolContext\n"
        "import pi_tool_read\n"
        "async def main():\n"
        "    tool = pi_tool_read.create_tool()\n"
        "    for name in sys.argv[1:]:\n"
        "        r = await tool.execute('c', {'path': name}, AbortController().signal, None, ToolContext(cwd='.'))\n"
        "        print(len(r.content), r.content[0].text.replace(chr(10), ' | '))\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(small), str(big)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0].startswith("2 Read image file [image/png]")
    assert out[1].startswith("1 ") and "omitted" in out[1] and "Pillow" in out[1]

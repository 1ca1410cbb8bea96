"""shellScrubProviderKeys also hides the keys in pi's own process: unset at the C level (a child
started without an explicit environment does not inherit them, while ``os.environ`` keeps them
for the catalog), and the start-up environment and ``--api-key`` bytes that ``/proc`` reports are
blanked. The ``/proc`` rewrite itself is checked through the real ``pi`` in
tests/e2e/providers/test_secrets.py; here its byte surgery runs on a file laid out the same way."""

from __future__ import annotations

import os
import subprocess

import pi_tool_bash
import pytest

from pi_host.lib.toolkit import own_environment
from tests.support.tools import run, text_of


@pytest.fixture
def tool():
    return pi_tool_bash.create_tool()


async def test_scrubbing_unsets_the_keys_below_python_but_keeps_them_for_pi(tool, tmp_path, monkeypatch):
    monkeypatch.setenv("PI_TEST_SCRUB_API_KEY", "scrubbed-value-1234")
    probe = ["sh", "-c", 'echo "${PI_TEST_SCRUB_API_KEY-unset}"']
    assert subprocess.run(probe, capture_output=True, text=True).stdout == "scrubbed-value-1234\n"
    result = await run(
        tool,
        {"command": 'echo "${PI_TEST_SCRUB_API_KEY-unset}"'},
        str(tmp_path),
        provider_key_variables=("PI_TEST_SCRUB_API_KEY",),
        settings={"shellScrubProviderKeys": True},
    )
    assert text_of(result) == "unset\n"
    assert os.environ["PI_TEST_SCRUB_API_KEY"] == "scrubbed-value-1234"  # the catalog still reads it
    assert subprocess.run(probe, capture_output=True, text=True).stdout == "unset\n"  # inherited by none


async def test_without_scrubbing_nothing_is_unset(tool, tmp_path, monkeypatch):
    monkeypatch.setenv("PI_TEST_KEPT_API_KEY", "kept-value-5678")
    result = await run(
        tool,
        {"command": 'echo "${PI_TEST_KEPT_API_KEY-unset}"'},
        str(tmp_path),
        provider_key_variables=("PI_TEST_KEPT_API_KEY",),
    )
    assert text_of(result) == "kept-value-5678\n"
    probe = ["sh", "-c", 'echo "${PI_TEST_KEPT_API_KEY-unset}"']
    assert subprocess.run(probe, capture_output=True, text=True).stdout == "kept-value-5678\n"


def _blank(tmp_path, block: bytes, wipe) -> bytes:
    path = tmp_path / "block"
    path.write_bytes(b"HEAD" + block + b"TAIL")
    fd = os.open(path, os.O_RDWR)
    try:
        wipe(fd, 4, 4 + len(block))
    finally:
        os.close(fd)
    data = path.read_bytes()
    assert data[:4] == b"HEAD" and data[-4:] == b"TAIL"  # nothing outside the block is touched
    return data[4:-4]


def test_the_environ_entries_of_the_named_variables_become_blank(tmp_path):
    block = b"HOME=/h\0OPENAI_API_KEY=sk-1\0MY_OPENAI_API_KEY=x\0OPENAI_API_KEY_OLD=y\0Z=1\0"
    names = {b"OPENAI_API_KEY"}
    out = _blank(tmp_path, block, lambda fd, a, b: own_environment._wipe_environ(fd, a, b, names))
    assert (
        out
        == b"HOME=/h\0"
        + b"\0" * len("OPENAI_API_KEY=sk-1")
        + b"\0MY_OPENAI_API_KEY=x\0OPENAI_API_KEY_OLD=y\0Z=1\0"
    )
    assert len(out) == len(block)


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (
            b"python\0-m\0pi_host\0--api-key\0sk-flag-9\0-p\0hi\0",
            b"python\0-m\0pi_host\0--api-key\0*********\0-p\0hi\0",
        ),
        (b"pi\0--api-key=sk-flag-9\0-p\0", b"pi\0--api-key=*********\0-p\0"),
        (b"pi\0-p\0no key here\0", b"pi\0-p\0no key here\0"),
        (b"pi\0--api-key\0", b"pi\0--api-key\0"),  # a flag without a value: nothing to blank
    ],
)
def test_the_api_key_value_in_the_arguments_becomes_stars(tmp_path, block, expected):
    assert _blank(tmp_path, block, own_environment._wipe_key_flag) == expected

"""ls and find on file names that are not UTF-8, through the real ``pi`` and the faux model.

A Latin-1 name (``café.txt`` written as the byte 0xE9) used to make the whole call fail, hiding
every other entry of the directory from the model. Each such name is listed with U+FFFD for its
bad bytes (what Node's decoder, and so pi, shows) and the rest of the listing is unchanged.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.support.faux import text, tool_call
from tests.support.tools import end_text, pi_cli, tool_ends

SHOWN = "caf\ufffd.txt"


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "proj"
    (root / "sub").mkdir(parents=True)
    with open(os.path.join(os.fsencode(root), b"caf\xe9.txt"), "wb") as handle:
        handle.write(b"latin-1 name\n")
    (root / "ok.txt").write_text("fine\n")
    nested = os.path.join(os.fsencode(root / "sub"), b"d\xe9j\xe0")
    os.mkdir(nested)
    with open(os.path.join(nested, b"inner.txt"), "wb") as handle:
        handle.write(b"x\n")
    return root


def test_ls_lists_a_latin1_name_with_the_rest_of_the_directory(tree):
    script = [tool_call("ls"), text("Files:\n{{lastToolResult}}")]
    done, _ = pi_cli("-p", "--tools", "ls", "what is here?", script=script, cwd=str(tree))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Files:\n{SHOWN}\nok.txt\nsub/\n"


def test_find_lists_latin1_names_and_walks_into_a_latin1_directory(tree):
    script = [tool_call("find", pattern="*"), text("Found:\n{{lastToolResult}}")]
    done, _ = pi_cli("-p", "--tools", "find", "find all", script=script, cwd=str(tree))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Found:",
        SHOWN,
        "ok.txt",
        "sub/",
        "sub/d\ufffdj\ufffd/",
        "sub/d\ufffdj\ufffd/inner.txt",
    ]


def test_json_mode_carries_the_listing_as_valid_json(tree):
    script = [tool_call("ls"), tool_call("find", pattern="*.txt"), text("done")]
    done, _ = pi_cli("--mode", "json", "--tools", "ls,find", "go", script=script, cwd=str(tree))
    assert done.returncode == 0, done.stderr
    assert '"extension_error"' not in done.stdout
    ends = tool_ends(done.stdout)
    assert [(e["toolName"], e["isError"]) for e in ends] == [("ls", False), ("find", False)]
    assert end_text(ends[0]).splitlines() == [SHOWN, "ok.txt", "sub/"]
    assert end_text(ends[1]).splitlines() == [SHOWN, "ok.txt", "sub/d\ufffdj\ufffd/inner.txt"]
    # Every line of the output is UTF-8 JSON (the whole stream decoded as text above).
    for line in done.stdout.splitlines():
        json.loads(line)

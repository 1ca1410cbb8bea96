"""A plugin file edited within the same second to text of the same length loads as edited (the
``/reload`` case: bytecode validated by mtime and size would bring back the old code)."""

from __future__ import annotations

import os
import py_compile

from pi_host.plugins.loading import load_file_plugin


def test_an_edit_of_the_same_size_and_mtime_is_what_loads(tmp_path):
    plugin = tmp_path / "greet.py"
    plugin.write_text("WORD = 'first'\n")
    stamp = os.stat(plugin).st_mtime_ns
    py_compile.compile(str(plugin))  # a bytecode cache that matches the first text
    assert load_file_plugin(str(plugin)).WORD == "first"
    plugin.write_text("WORD = 'later'\n")  # same length
    os.utime(plugin, ns=(stamp, stamp))  # and the same mtime
    module = load_file_plugin(str(plugin))
    assert module.WORD == "later"
    assert module.__file__ == str(plugin)


def test_a_syntax_error_names_the_file_and_line(tmp_path):
    plugin = tmp_path / "broken.py"
    plugin.write_text("x = 1\ndef (:\n")
    try:
        load_file_plugin(str(plugin))
    except SyntaxError as exc:
        assert exc.filename == str(plugin) and exc.lineno == 2
    else:
        raise AssertionError("no SyntaxError")

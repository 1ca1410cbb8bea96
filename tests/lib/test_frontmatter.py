"""YAML frontmatter splitting (pi_host.lib.frontmatter)."""

from __future__ import annotations

from pi_host.lib.frontmatter import parse_frontmatter


def test_basic_split():
    parsed = parse_frontmatter("---\nname: x\ndescription: y z\n---\nBody\n")
    assert parsed.present and parsed.data == {"name": "x", "description": "y z"} and parsed.body == "Body\n"


def test_crlf_and_bom():
    parsed = parse_frontmatter("\ufeff---\r\ndescription: d\r\n---\r\nBody\r\n")
    assert parsed.data == {"description": "d"} and parsed.body == "Body\r\n"


def test_no_frontmatter_or_no_closing_fence_is_all_body():
    assert parse_frontmatter("Just text").body == "Just text"
    unclosed = parse_frontmatter("---\nname: x\nno end")
    assert not unclosed.present and unclosed.body == "---\nname: x\nno end"
    assert parse_frontmatter("----\nx\n----\n").data == {}  # a longer rule is not a fence


def test_empty_frontmatter_and_fence_at_end_of_file():
    assert parse_frontmatter("---\n---\nBody").data == {}
    at_end = parse_frontmatter("---\ndescription: d\n---")
    assert at_end.data == {"description": "d"} and at_end.body == ""


def test_yaml_types_and_errors():
    parsed = parse_frontmatter("---\ndisable-model-invocation: true\nmetadata:\n  a: [1, 2]\n---\n")
    assert parsed.data == {"disable-model-invocation": True, "metadata": {"a": [1, 2]}}
    bad = parse_frontmatter("---\ndescription: [oops\n---\nbody")
    assert bad.error and bad.error.startswith("invalid YAML") and bad.body == "body"
    scalar = parse_frontmatter("---\njust a string\n---\n")
    assert scalar.error == "frontmatter is not a mapping"


def test_unsafe_yaml_tags_are_rejected():
    parsed = parse_frontmatter("---\nx: !!python/object/apply:os.system ['echo hi']\n---\n")
    assert parsed.error and parsed.data == {}

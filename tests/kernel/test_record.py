"""The plain-record base of the protocol classes (pi_host._record): checks that convert and
reject, strict and lax modes, errors with pydantic-shaped locations, JSON in pi's field order, the
pydantic-style methods plugins use, and subclasses written with pydantic's ``Field``."""

from __future__ import annotations

import json
from typing import Literal

import pydantic
import pytest

from pi_host._record import Field, Record, RecordError
from pi_host.agent import PiModel
from pi_host.lib.sessions.validate import message_problem
from pi_host.protocol import (
    AssistantMessage,
    Model,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UnknownMessage,
    UserMessage,
    parse_message,
)


def test_nested_dicts_become_records_chosen_by_their_type_tag():
    message = parse_message(
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hm"},
                {"type": "toolCall", "id": "1", "name": "ls"},
            ],
            "usage": {"input": 3, "cost": {"total": 0.5}},
            "stopReason": "toolUse",
        }
    )
    assert [type(b).__name__ for b in message.content] == ["ThinkingContent", "ToolCall"]
    assert message.content[1].arguments == {}
    assert message.usage.cost.total == 0.5 and message.usage.output == 0
    assert message.stop_reason == "toolUse" and message["stopReason"] == "toolUse"


def test_lax_mode_converts_numbers_as_text_and_integral_floats_strict_mode_does_not():
    lax = parse_message({"role": "assistant", "usage": {"input": "5", "output": 7.0}})
    assert lax.usage.input == 5 and lax.usage.output == 7 and isinstance(lax.usage.output, int)
    with pytest.raises(RecordError) as caught:
        parse_message({"role": "assistant", "usage": {"input": "5"}}, strict=True)
    assert caught.value.errors()[0]["loc"] == ("usage", "input")
    assert caught.value.errors()[0]["type"] == "int_type"


def test_numbers_keep_their_int_or_float_form():
    message = parse_message({"role": "user", "content": "x", "timestamp": 0})
    assert message.to_json()["timestamp"] == 0 and isinstance(message.timestamp, int)
    assert parse_message({"role": "user", "content": "x", "timestamp": 1.5}).timestamp == 1.5


def test_errors_name_the_deepest_field_for_the_session_loader():
    data = {"role": "assistant", "content": [{"type": "text", "text": 5}]}
    with pytest.raises(RecordError) as caught:
        parse_message(data, strict=True)
    assert (
        message_problem("message", data, caught.value)
        == "field message.content.0.text: expected a string, got 5"
    )
    data = {"role": "user", "content": 5}
    with pytest.raises(RecordError) as caught:
        parse_message(data, strict=True)
    assert "expected a string or an array" in message_problem("message", data, caught.value)
    with pytest.raises(RecordError) as caught:
        parse_message({"role": "toolResult", "toolName": "ls", "content": []})
    assert caught.value.errors()[0] == {
        "loc": ("toolCallId",),
        "type": "missing",
        "msg": "Field required",
        "input": {"role": "toolResult", "toolName": "ls", "content": []},
    }
    assert "toolCallId" in str(caught.value)


def test_an_unknown_block_type_or_literal_is_refused():
    with pytest.raises(RecordError, match="does not match"):
        parse_message({"role": "assistant", "content": [{"type": "video", "url": "x"}]})
    with pytest.raises(RecordError, match="stopReason"):
        parse_message({"role": "assistant", "stopReason": "finished"})


def test_unknown_roles_and_fields_survive_a_round_trip():
    data = {"role": "note", "timestamp": 1, "body": {"a": [1, None]}}
    message = parse_message(data)
    assert isinstance(message, UnknownMessage) and message.to_json() == data
    user = parse_message({"role": "user", "content": "x", "timestamp": 2, "futureField": {"k": 1}})
    assert user.to_json() == {"role": "user", "content": "x", "timestamp": 2, "futureField": {"k": 1}}
    assert user.model_extra == {"futureField": {"k": 1}} and user["futureField"] == {"k": 1}


def test_json_keeps_pi_field_order_after_a_field_is_reassigned():
    block = TextContent(text="a", text_signature="sig")
    text = block.__dict__.pop("text")  # what the stream builder does to append in place
    block.__dict__["text"] = text + "b"
    assert list(block.to_json()) == ["type", "text", "textSignature"]
    assert json.dumps(block.to_json()) == '{"type": "text", "text": "ab", "textSignature": "sig"}'


def test_none_is_left_out_of_json_but_kept_inside_free_form_values():
    call = ToolCall(id="1", name="x", arguments={"a": None, "b": (1, 2)})
    assert call.to_json() == {
        "type": "toolCall",
        "id": "1",
        "name": "x",
        "arguments": {"a": None, "b": [1, 2]},
    }
    assert call.model_dump()["thought_signature"] is None
    assert call.model_dump(by_alias=True, exclude_none=True, exclude={"arguments"}) == {
        "type": "toolCall",
        "id": "1",
        "name": "x",
    }


def test_pydantic_style_methods():
    message = ToolResultMessage(tool_call_id="1", tool_name="ls", content=[{"type": "text", "text": "ok"}])
    assert isinstance(message.content[0], TextContent)
    copy = message.model_copy(update={"is_error": True, "isExtra": 1})
    assert copy.is_error and not message.is_error and copy.model_extra == {"isExtra": 1}
    deep = message.model_copy(deep=True)
    assert deep == message and deep.content[0] is not message.content[0]
    assert json.loads(message.model_dump_json(by_alias=True))["toolCallId"] == "1"
    assert ToolResultMessage.model_validate(message.to_json()) == message
    assert ToolResultMessage.model_fields["tool_call_id"].alias == "toolCallId"
    assert dict(TextContent(text="t")) == {"type": "text", "text": "t", "text_signature": None}
    assert repr(TextContent(text="t")) == "TextContent(type='text', text='t', text_signature=None)"
    assert message != UserMessage(content="x")
    with pytest.raises(TypeError):
        hash(message)


def test_constructors_check_what_they_are_given():
    with pytest.raises(RecordError, match="content"):
        UserMessage(content=5)
    with pytest.raises(RecordError):
        AssistantMessage(usage="lots")
    assert Model.model_validate({"id": "m", "contextWindow": "1000"}).context_window == 1000


class Note(PiModel):
    role: Literal["note"] = "note"
    text: str
    tags: list[str] = pydantic.Field(default_factory=list)
    stamp: int = pydantic.Field(default=7, alias="stampMs")


class Tagged(Record):
    kind: str = Field(default="x", alias="Kind")
    values: dict[str, int] = Field(default_factory=dict)


def test_subclasses_declared_with_this_or_pydantic_field():
    note = Note(text="hi")
    assert note.tags == [] and note.tags is not Note(text="again").tags
    assert note.to_json() == {"role": "note", "text": "hi", "tags": [], "stampMs": 7}
    assert Note.model_validate({"text": "t", "stampMs": 9}).stamp == 9
    with pytest.raises(RecordError, match="text"):
        Note()
    assert Tagged(Kind="y").kind == "y"
    with pytest.raises(RecordError) as caught:
        Tagged(values={"a": "x"})
    assert caught.value.errors()[0]["loc"] == ("values", "a")


class OnlyForTypeCheckers(PiModel):
    role: str = "x"
    thing: NotImportedHere | None = None  # noqa: F821 (a name imported under TYPE_CHECKING)


def test_an_annotation_that_cannot_be_resolved_takes_any_value():
    assert OnlyForTypeCheckers(thing=3).to_json() == {"role": "x", "thing": 3}

"""Amazon Bedrock (``bedrock-converse-stream``) against a loopback server speaking ConverseStream:
SigV4 checked against a known-answer vector, the event-stream bytes the loopback server sends
checked with botocore's own parser, the request (path, signature, body) and a streamed answer
with thinking, text and a tool call."""

from __future__ import annotations

import datetime
import json

import pytest
from pi_provider_bedrock import auth
from pi_provider_bedrock.eventstream import Decoder, FramingError

from pi_host.config.models import ModelRegistry
from pi_host.plugins.selection import PluginRequest, load_plugins
from tests.support.providers import eventstream
from tests.support.providers.openai_google import (  # noqa: F401 - fixtures
    collect,
    context,
    final,
    module_server_fixture,
    options,
    sse_fixture,
)
from tests.support.providers.sse import Reply

MODEL = "us.anthropic.claude-opus-5-5"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"


@pytest.fixture(autouse=True)
def no_ambient_aws(monkeypatch, isolated_environment):
    for name in (
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_SESSION_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # never ask an instance endpoint
    home = isolated_environment["home"]
    monkeypatch.setenv("AWS_CONFIG_FILE", str(home / ".aws" / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / ".aws" / "credentials"))
    auth._sessions.clear()


def test_sigv4_known_answer(monkeypatch):
    """AWS's SigV4 test suite, ``post-vanilla`` (service ``service``,
    us-east-1, 2015-08-30T12:36:00Z): the signature AWS publishes."""
    import botocore.auth
    from botocore.credentials import Credentials

    stamp = datetime.datetime(2015, 8, 30, 12, 36, 0)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: stamp)
    monkeypatch.setattr(auth, "SERVICE", "service")
    credentials = Credentials("AKIDEXAMPLE", SECRET)
    headers = auth.sign("https://example.amazonaws.com/", b"", {}, credentials, "us-east-1")
    expected = (
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
        "SignedHeaders=host;x-amz-date, Signature="
    )
    assert headers["X-Amz-Date"] == "20150830T123600Z"
    assert (
        headers["Authorization"]
        == expected + "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
    )


def test_loopback_event_stream_bytes_parse_with_botocore():
    from botocore.eventstream import EventStreamBuffer

    raw = eventstream.converse_tool_call_stream() + eventstream.exception("throttlingException", "slow down")
    official = EventStreamBuffer()
    official.add_data(raw)
    theirs = [(dict(m.headers), m.payload) for m in official]
    mine = []
    decoder = Decoder()
    for start in range(0, len(raw), 7):  # network-sized pieces cutting messages anywhere
        mine += decoder.feed(raw[start : start + 7])
    assert mine == theirs and decoder.pending == 0
    assert theirs[0][0][":event-type"] == "messageStart"
    assert theirs[-1][0] == {
        ":exception-type": "throttlingException",
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    corrupt = bytearray(raw[:40])
    corrupt[20] ^= 1
    with pytest.raises(FramingError, match="checksum"):
        Decoder().feed(bytes(corrupt) + raw[40:])


def bedrock_registry(agent, base_url):
    (agent / "models.json").write_text(json.dumps({"providers": {"amazon-bedrock": {"baseUrl": base_url}}}))
    return ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=str(agent))).host)


async def run(registry, model, **fields):
    key = registry.get_api_key(model.provider)
    return await collect(registry.stream_fn(model)(model, context(), options(api_key=key, **fields)))


def converse_reply(raw: bytes) -> Reply:
    parts = [raw[i : i + 50] for i in range(0, len(raw), 50)]
    return Reply(headers={"content-type": "application/vnd.amazon.eventstream"}, parts=parts)


async def test_sigv4_request_and_streamed_tool_call(sse, isolated_environment, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDLOOPBACKTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session-token-loopback-0123")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    registry = bedrock_registry(isolated_environment["agent"], sse.url)
    model = registry.find("amazon-bedrock", MODEL)
    assert registry.get_api_key("amazon-bedrock") == "<authenticated>"
    sse.enqueue(converse_reply(eventstream.converse_tool_call_stream()))
    events = await run(registry, model, thinking_level="high")
    message = final(events)
    assert events[-1].type == "done", message.error_message
    assert message.stop_reason == "toolUse" and message.api == "bedrock-converse-stream"
    thinking, text, call = message.content
    assert thinking.thinking == "Need the file." and thinking.thinking_signature == "sig-part-1"
    assert text.text == "Reading main.py."
    assert (call.id, call.name, call.arguments) == ("tooluse_abc123", "read", {"path": "main.py"})
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (120, 40, 10, 5)
    kinds = [e.type for e in events]
    assert kinds.count("toolcall_delta") == 2 and kinds[0] == "start"
    request = sse.last
    assert request.path == "/model/us.anthropic.claude-opus-5-5/converse-stream"
    authorization = request.headers["authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDLOOPBACKTEST/")
    assert "/eu-west-1/bedrock/aws4_request" in authorization
    assert "SignedHeaders=accept;content-type;host;x-amz-date;x-amz-security-token" in authorization
    assert request.headers["x-amz-security-token"] == "session-token-loopback-0123"
    body = request.json
    assert body["messages"][0]["role"] == "user" and body["messages"][0]["content"][0] == {
        "text": "Read main.py"
    }
    assert body["messages"][0]["content"][-1] == {"cachePoint": {"type": "default"}}
    assert body["system"][0]["text"].startswith("You are a test assistant.")
    assert body["toolConfig"]["tools"][0]["toolSpec"]["name"] == "read"
    assert body["inferenceConfig"]["maxTokens"] == model.max_tokens
    assert body["additionalModelRequestFields"]["thinking"]["type"] == "adaptive"


async def test_profile_from_shared_files_bearer_token_and_exceptions(sse, isolated_environment, monkeypatch):
    home = isolated_environment["home"]
    (home / ".aws").mkdir()
    (home / ".aws" / "config").write_text("[profile team]\nregion = ap-south-1\n")
    (home / ".aws" / "credentials").write_text(
        f"[team]\naws_access_key_id = AKIDFROMPROFILE\naws_secret_access_key = {SECRET}\n"
    )
    monkeypatch.setenv("AWS_PROFILE", "team")
    registry = bedrock_registry(isolated_environment["agent"], sse.url)
    model = registry.find("amazon-bedrock", MODEL)
    sse.enqueue(converse_reply(eventstream.converse_tool_call_stream()))
    message = final(await run(registry, model))
    assert message.stop_reason == "toolUse", message.error_message
    assert "Credential=AKIDFROMPROFILE/" in sse.last.headers["authorization"]
    assert "/ap-south-1/bedrock/" in sse.last.headers["authorization"]
    # A Bedrock API key is a bearer token; an exception event ends the stream with pi's words.
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-loopback-123456")
    stream = eventstream.event("messageStart", {"role": "assistant"}) + eventstream.exception(
        "throttlingException", "Too many tokens, please wait"
    )
    sse.enqueue(converse_reply(stream))
    events = await run(registry, model)
    assert events[-1].type == "error"
    assert events[-1].error.error_message == "Throttling error: Too many tokens, please wait"
    assert sse.last.headers["authorization"] == "Bearer bedrock-api-key-loopback-123456"
    assert "x-amz-date" not in sse.last.headers


def test_region_and_endpoint_rules(monkeypatch):
    from tests.support.providers.openai_google import make_model

    standard = make_model(
        "https://bedrock-runtime.us-east-1.amazonaws.com", api="bedrock-converse-stream", id=MODEL
    )
    assert auth.region_for(standard, options()) == "us-east-1"
    assert (
        auth.endpoint(standard, options(), "us-east-1") == "https://bedrock-runtime.us-east-1.amazonaws.com"
    )
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    assert auth.region_for(standard, options()) == "eu-central-1"
    assert (
        auth.endpoint(standard, options(), "eu-central-1")
        == "https://bedrock-runtime.eu-central-1.amazonaws.com"
    )
    arn = standard.model_copy(update={"id": "arn:aws:bedrock:us-west-2:123:application-inference-profile/x"})
    assert auth.region_for(arn, options()) == "us-west-2"
    scoped = options(extra={"env": {"AWS_REGION": "sa-east-1"}})
    assert auth.region_for(standard, scoped) == "sa-east-1"

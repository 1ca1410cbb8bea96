"""A loopback server that plays one tool-call round trip for each of openai-completions,
openai-responses and google-generative-ai, for ``pi -p`` demos and the CLI tests.

The first request of a conversation gets a recorded stream that calls ``read`` on ``notes.txt``;
a request that already carries a tool result gets a recorded final answer. Paths:

* ``/oc/v1/chat/completions``                          openai-completions
* ``/resp/v1/responses``                               openai-responses
* ``/g/v1beta/models/<id>:streamGenerateContent``      google-generative-ai

Run it by hand: ``.venv/bin/python -m tests.support.providers.demo`` prints the
base URL and a models.json to use, then serves until interrupted.
"""

from __future__ import annotations

import json
import time

from tests.support.providers.sse import Reply, SSEServer, sse_events  # noqa: E402

ANSWER = "notes.txt says: hello from the fixture."
ARGS = {"path": "notes.txt"}


def _chunk(delta: dict, finish: str | None = None) -> dict:
    return {
        "id": "chatcmpl-demo",
        "object": "chat.completion.chunk",
        "created": 1764460800,
        "model": "demo",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def completions_tool_call() -> str:
    args = json.dumps(ARGS)
    events = [(None, _chunk({"role": "assistant", "content": "Reading it."}))]
    events.append(
        (
            None,
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_demo1",
                            "type": "function",
                            "function": {"name": "read", "arguments": ""},
                        }
                    ]
                }
            ),
        )
    )
    events += [
        (None, _chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[i : i + 4]}}]}))
        for i in range(0, len(args), 4)
    ]
    events.append((None, _chunk({}, "tool_calls")))
    events.append(
        (
            None,
            {"id": "chatcmpl-demo", "choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 12}},
        )
    )
    return sse_events(events) + "data: [DONE]\n\n"


def completions_answer() -> str:
    events = [(None, _chunk({"content": ANSWER[i : i + 5]})) for i in range(0, len(ANSWER), 5)]
    events.append((None, _chunk({}, "stop")))
    events.append(
        (None, {"id": "chatcmpl-demo", "choices": [], "usage": {"prompt_tokens": 80, "completion_tokens": 9}})
    )
    return sse_events(events) + "data: [DONE]\n\n"


def _responses(output_items: list[dict], usage: dict) -> str:
    events = [
        (
            "response.created",
            {"type": "response.created", "response": {"id": "resp_demo", "status": "in_progress"}},
        )
    ]
    for index, item in enumerate(output_items):
        started = {**item, "status": "in_progress"}
        if item["type"] == "message":
            started["content"] = []
        if item["type"] == "function_call":
            started["arguments"] = ""
        events.append(
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": index, "item": started},
            )
        )
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events += [
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "delta": text[i : i + 6],
                    },
                )
                for i in range(0, len(text), 6)
            ]
        else:
            events.append(
                (
                    "response.function_call_arguments.delta",
                    {
                        "type": "response.function_call_arguments.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "delta": item["arguments"],
                    },
                )
            )
        events.append(
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": index, "item": item},
            )
        )
    events.append(
        (
            "response.completed",
            {
                "type": "response.completed",
                "response": {"id": "resp_demo", "status": "completed", "usage": usage},
            },
        )
    )
    return sse_events(events)


def responses_tool_call() -> str:
    return _responses(
        [
            {
                "id": "fc_demo1",
                "type": "function_call",
                "call_id": "call_demo1",
                "name": "read",
                "arguments": json.dumps(ARGS),
                "status": "completed",
            }
        ],
        {"input_tokens": 50, "output_tokens": 12, "total_tokens": 62},
    )


def responses_answer() -> str:
    return _responses(
        [
            {
                "id": "msg_demo2",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
            }
        ],
        {"input_tokens": 80, "output_tokens": 9, "total_tokens": 89},
    )


def _google(parts: list[dict], usage: dict) -> str:
    chunks = [
        {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}],
            "modelVersion": "gemini-demo",
        }
        for part in parts
    ]
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    chunks[-1]["usageMetadata"] = usage
    return "".join("data: " + json.dumps(c) + "\r\n\r\n" for c in chunks)


def google_tool_call() -> str:
    return _google(
        [{"text": "Reading it."}, {"functionCall": {"name": "read", "args": ARGS}}],
        {"promptTokenCount": 50, "candidatesTokenCount": 12, "totalTokenCount": 62},
    )


def google_answer() -> str:
    return _google(
        [{"text": ANSWER[:20]}, {"text": ANSWER[20:]}],
        {"promptTokenCount": 80, "candidatesTokenCount": 9, "totalTokenCount": 89},
    )


_RESULT_MARKERS = ('"role": "tool"', '"role":"tool"', "function_call_output", "functionResponse")


class DemoServer(SSEServer):
    """Chooses the reply from the request: tool call first, answer once a result came back."""

    def take(self, path: str) -> Reply:
        body = self.requests[-1].body.decode("utf-8", "replace")
        done = any(marker in body for marker in _RESULT_MARKERS)
        if path.startswith("/oc/"):
            text = completions_answer() if done else completions_tool_call()
        elif path.startswith("/resp/"):
            text = responses_answer() if done else responses_tool_call()
        elif path.startswith("/g/"):
            text = google_answer() if done else google_tool_call()
        else:
            return Reply.json(404, {"error": {"message": f"unknown path {path}"}})
        return Reply.sse(text, chunk_size=37)


def models_json(url: str) -> dict:
    model = {"contextWindow": 32000, "maxTokens": 4096}
    return {
        "providers": {
            "loop-completions": {
                "baseUrl": f"{url}/oc/v1",
                "api": "openai-completions",
                "apiKey": "unused",
                "models": [{"id": "demo-chat", **model}],
            },
            "loop-responses": {
                "baseUrl": f"{url}/resp/v1",
                "api": "openai-responses",
                "apiKey": "unused",
                "models": [{"id": "demo-resp", **model}],
            },
            "loop-google": {
                "baseUrl": f"{url}/g/v1beta",
                "api": "google-generative-ai",
                "apiKey": "unused",
                "models": [{"id": "gemini-demo", **model}],
            },
        }
    }


if __name__ == "__main__":
    server = DemoServer().start()
    print(server.url)
    print(json.dumps(models_json(server.url), indent=2), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()

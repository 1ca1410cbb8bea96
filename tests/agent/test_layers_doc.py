"""docs/layers.md's examples run as written (faux model), then its hand-off again with a loopback
OpenAI-compatible server as the second model: thinking from one provider replayed to another."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pi_provider_faux

from tests.support.loopback import LoopbackServer, Reply

DOC = Path(__file__).resolve().parents[2] / "docs" / "layers.md"


def doc_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def run_doc() -> dict:
    namespace: dict = {"__name__": "layers_doc"}
    for block in doc_blocks():
        exec(compile(block, str(DOC), "exec"), namespace)
    return namespace


def test_every_python_block_of_the_doc_runs():
    assert len(doc_blocks()) >= 7
    namespace = run_doc()
    chat = namespace["chat"]
    thinking = [b for b in chat.messages[1].content if b.type == "thinking"]
    assert thinking and thinking[0].thinking == "25*18 = 450"  # the first model's, kept in the context


def test_the_hand_off_reaches_a_loopback_server_without_the_other_models_thinking():
    namespace = run_doc()
    models, hand_off, provider_info = namespace["models"], namespace["hand_off"], namespace["ProviderInfo"]
    with LoopbackServer([Reply("It is right.", reasoning="checking 25*18")]) as server:
        models.set_provider(
            provider_info(
                id="mine",
                api="openai-completions",
                base_url=server.url,
                models=[{"id": "local-1", "reasoning": True}],
            )
        )
        pi_provider_faux.set_responses([{"thinking": "25*18 = 450", "text": "450"}])
        first, second = models.get_model("faux", "faux-reasoner"), models.get_model("mine", "local-1")
        chat = asyncio.run(hand_off(models, first, second))
        body = server.requests[0]
    sent = [(m["role"], m.get("content")) for m in body["messages"]]
    assert ("assistant", "450") in sent or any(
        role == "assistant" and "450" in str(content) for role, content in sent
    )
    assert "25*18 = 450" not in str(body)  # another model's thinking is not replayed as text
    assert body["messages"][-1]["role"] == "user"
    answer = chat.messages[-1]
    assert answer.provider == "mine" and answer.text() == "It is right."
    assert [b.thinking for b in answer.content if b.type == "thinking"] == ["checking 25*18"]

    # and back: the loopback model's thinking goes to the faux provider in the same context
    async def back() -> None:
        chat.messages.append(namespace["UserMessage"](content="Thanks"))
        pi_provider_faux.set_responses([{"text": "ok"}])
        chat.messages.append(await models.complete(first, chat))

    asyncio.run(back())
    replayed = pi_provider_faux.requests[-1]["messages"]
    handed = [m for m in replayed if getattr(m, "provider", None) == "mine"]
    assert [b.thinking for m in handed for b in m.content if b.type == "thinking"] == ["checking 25*18"]
    assert chat.messages[-1].text() == "ok"

"""A small customer-support agent built on pi-host's libraries, without the coding agent.

It shows, in one file, what docs/layers.md walks through:

* two tools of its own: ``lookup_order`` (JSON Schema parameters) and ``issue_refund`` (a pydantic
  model as parameters, run one call at a time);
* a custom message type, :class:`StaffNote`: notes for the support staff, kept in the transcript
  and the store but never sent to the model (``convert_to_llm`` leaves them out);
* steering from another task: a supervisor task watches the events and, while a tool runs, tells
  the agent that the customer is a VIP; the model sees it before its next request;
* its own persistence: every message goes to a JSON-lines file, and a second agent opened on the
  same file continues the conversation.

Run it against the scripted faux model (no key, no network)::

    .venv/bin/python examples/support_desk.py

or against any OpenAI-compatible chat-completions server::

    .venv/bin/python examples/support_desk.py --base-url http://127.0.0.1:8080/v1 --model my-model
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from typing import Any, Literal

from pydantic import BaseModel, Field

from pi_host.agent import Agent, JsonlStore, PiModel, define_tool, now_ms
from pi_host.agent import Field as RecordField
from pi_host.ai import Models, ProviderInfo, builtin_models

ORDERS = {
    "A-100": {"item": "kettle", "status": "delivered", "price": 39.0},
    "A-200": {"item": "toaster", "status": "lost in transit", "price": 25.0},
}


class StaffNote(PiModel):
    """An internal note: shown to staff, stored, never part of the model's context."""

    role: Literal["staffNote"] = "staffNote"
    text: str
    author: str = "staff"
    timestamp: int = RecordField(default_factory=now_ms)


def convert_to_llm(messages: list[Any]) -> list[Any]:
    """The provider roles only: staff notes stay out of the model's context."""
    return [m for m in messages if m.role in ("system", "user", "assistant", "toolResult")]


class RefundRequest(BaseModel):
    order_id: str = Field(description="The order to refund, e.g. A-100")
    reason: str = Field(description="Why, in a few words")
    waive_fee: bool = Field(default=False, description="Refund the handling fee too")


def make_tools(refunds: list[dict[str, Any]], tool_delay: float = 0.0) -> list[Any]:
    async def lookup_order(call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> str:
        await asyncio.sleep(tool_delay)  # a slow back-office system: time for the supervisor
        order = ORDERS.get(params["order_id"])
        if order is None:
            raise ValueError(f"No order {params['order_id']}")
        return f"{params['order_id']}: {order['item']}, {order['status']}, ${order['price']:.2f}"

    def issue_refund(call_id: str, params: RefundRequest, signal: Any, on_update: Any) -> dict[str, Any]:
        order = ORDERS[params.order_id]
        amount = order["price"] if params.waive_fee else order["price"] - 5.0
        refund = {"order": params.order_id, "amount": amount, "reason": params.reason}
        refunds.append(refund)
        return refund

    return [
        define_tool(
            "lookup_order",
            "Look up an order's item, delivery status and price",
            {
                "type": "object",
                "properties": {"order_id": {"type": "string", "description": "e.g. A-100"}},
                "required": ["order_id"],
            },
            lookup_order,
        ),
        define_tool(
            "issue_refund",
            "Refund an order (a $5 handling fee is kept unless waived)",
            RefundRequest,
            issue_refund,
            execution_mode="sequential",
        ),
    ]


SYSTEM_PROMPT = (
    "You are the support desk of a small shop. Look orders up before answering, refund lost "
    "orders, and keep answers short."
)


def open_agent(
    model: Any, store_path: str, *, models: Models | None = None, tool_delay: float = 0.0
) -> Agent:
    """An agent on ``store_path``: a fresh conversation, or the one stored there."""
    refunds: list[dict[str, Any]] = []
    agent = Agent(
        model,
        system_prompt=SYSTEM_PROMPT,
        tools=make_tools(refunds, tool_delay),
        models=models,
        convert_to_llm=convert_to_llm,
        store=JsonlStore(store_path, decoders={"staffNote": StaffNote.model_validate}),
        max_turns=8,
    )
    agent.refunds = refunds  # type: ignore[attr-defined]  # what the tools did, for the caller
    return agent


async def supervise(agent: Agent) -> None:
    """Another task: once a tool runs, steer the agent (it sees this before its next request)."""
    running = asyncio.Event()
    unsubscribe = agent.subscribe(lambda e: running.set() if e["type"] == "tool_execution_start" else None)
    try:
        await running.wait()
        agent.steer("Supervisor: this customer is a VIP, waive the handling fee on any refund.")
    finally:
        unsubscribe()


async def conversation(agent: Agent, say: Any = print) -> None:
    agent.subscribe(
        lambda e: say(f"[{e['message'].role}] {_text(e['message'])}") if e["type"] == "message_end" else None
    )
    await agent.add_message(StaffNote(text="Customer called twice about A-200 already."))
    supervisor = asyncio.create_task(supervise(agent))
    await agent.prompt("My toaster order A-200 never arrived. Can I get my money back?")
    await supervisor


def faux_script() -> list[dict[str, Any]]:
    """What the scripted faux model answers, request by request."""
    return [
        {"toolCalls": [{"name": "lookup_order", "arguments": {"order_id": "A-200"}}]},
        {
            "thinking": "Lost in transit, and the supervisor says VIP: waive the fee.",
            "toolCalls": [
                {
                    "name": "issue_refund",
                    "arguments": {"order_id": "A-200", "reason": "lost in transit", "waive_fee": True},
                }
            ],
        },
        {"text": "Done: your toaster order A-200 is refunded in full, $25.00."},
        {"text": "You are welcome. (I remember: {{userMessages}})"},
    ]


def _text(message: Any) -> str:
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content
    if content is None:
        return getattr(message, "text", "")
    parts = []
    for block in content:
        if block.type == "text":
            parts.append(block.text)
        elif block.type == "toolCall":
            parts.append(f"{block.name}({block.arguments})")
    return " ".join(parts)


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="an OpenAI-compatible server (default: the faux model)")
    parser.add_argument("--model", default="loop-1")
    parser.add_argument("--store", default=os.path.join(tempfile.mkdtemp(), "support.jsonl"))
    args = parser.parse_args(argv)
    models = builtin_models(api_keys={"desk": os.environ.get("DESK_API_KEY", "unused")})
    if args.base_url:
        models.set_provider(
            ProviderInfo(
                id="desk", api="openai-completions", base_url=args.base_url, models=[{"id": args.model}]
            )
        )
        model = models.get_model("desk", args.model)
    else:
        import pi_provider_faux

        pi_provider_faux.set_responses(faux_script())
        model = models.get_model("faux", "faux-1")
    agent = open_agent(model, args.store, models=models, tool_delay=0.05)
    await conversation(agent)
    print("refunds:", agent.refunds)  # type: ignore[attr-defined]
    again = open_agent(model, args.store, models=models)  # a new process would do the same
    print(f"reopened {args.store}: {len(again.state.messages)} messages")
    await again.prompt("Thanks!")
    print(again.state.messages[-1].text())


if __name__ == "__main__":
    asyncio.run(main())

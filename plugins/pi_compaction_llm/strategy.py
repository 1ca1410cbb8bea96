"""The LLM strategy: builds the requests, merges the parts, appends the file lists."""

from __future__ import annotations

from typing import Any

from pi_compaction_llm import prompts
from pi_host.lib.compaction import add_usage, complete_summary, serialize_conversation


def history_prompt(preparation: Any) -> str:
    text = f"<conversation>\n{serialize_conversation(preparation.messages_to_summarize)}\n</conversation>"
    if preparation.previous_summary:
        text += f"\n\n<previous-summary>\n{preparation.previous_summary}\n</previous-summary>"
        instructions = prompts.UPDATE_INSTRUCTIONS
    else:
        instructions = prompts.INITIAL_INSTRUCTIONS
    return text + "\n\n" + instructions + prompts.focus(preparation.custom_instructions)


def turn_prefix_prompt(preparation: Any) -> str:
    return (
        "# Conversation\n\n"
        + serialize_conversation(preparation.turn_prefix_messages)
        + "\n\n# Instructions\n\n"
        + prompts.TURN_PREFIX_INSTRUCTIONS
        + prompts.focus(preparation.custom_instructions)
    )


async def summarize(preparation: Any, ctx: Any) -> dict[str, Any]:
    """History summary (iterative when a previous one exists), then the split turn's prefix;
    requests run one after the other."""
    session = ctx.session
    usage = None
    common = {"signal": preparation.signal, "source": "compaction", "reason": preparation.reason}
    if preparation.messages_to_summarize:
        response = await complete_summary(
            session, prompts.SYSTEM_PROMPT, history_prompt(preparation), **common
        )
        history, usage = response.text, add_usage(usage, response.usage)
    else:
        history = preparation.previous_summary or prompts.NO_PRIOR_HISTORY
    summary = history
    if preparation.is_split_turn and preparation.turn_prefix_messages:
        response = await complete_summary(
            session, prompts.SYSTEM_PROMPT, turn_prefix_prompt(preparation), **common
        )
        usage = add_usage(usage, response.usage)
        summary = f"{history}\n\n---\n\n{prompts.SPLIT_TURN_HEADING}\n\n{response.text}"
    summary += preparation.file_ops.format()
    result: dict[str, Any] = {"summary": summary, "details": preparation.file_ops.details()}
    if usage is not None:
        result["usage"] = usage
    return result


def branch_prompt(preparation: Any) -> str:
    text = f"<conversation>\n{serialize_conversation(preparation.messages)}\n</conversation>\n\n"
    if preparation.replace_instructions and preparation.custom_instructions:
        return text + preparation.custom_instructions.strip()
    return text + prompts.BRANCH_INSTRUCTIONS + prompts.focus(preparation.custom_instructions)


async def summarize_branch(preparation: Any, ctx: Any) -> dict[str, Any]:
    response = await complete_summary(
        ctx.session,
        prompts.SYSTEM_PROMPT,
        branch_prompt(preparation),
        signal=preparation.signal,
        source="branchSummary",
    )
    summary = prompts.BRANCH_PREAMBLE + response.text + preparation.file_ops.format()
    return {"summary": summary, "details": preparation.file_ops.details(), "usage": response.usage}

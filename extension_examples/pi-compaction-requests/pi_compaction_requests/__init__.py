"""pi-compaction-requests: compaction without a model call.

Installing this package replaces pi-host's default LLM summaries (the host uses the last
registered strategy unless ``compaction.strategy`` names one). The summary it writes lists what
the user asked for, in order, plus the files that were read and modified; it is deterministic,
free and instant, at the price of losing the assistant's findings.

Shows the extension point ``register_compaction_strategies``: the host has already decided when
to compact and where to cut, and hands the strategy a preparation with the messages to summarize.
"""

from __future__ import annotations

from pi_host import hookimpl
from pi_host.plugins.registrations import CompactionStrategy

__version__ = "0.1.0"
NAME = "requests-only"


async def _summarize(preparation, ctx):
    from pi_compaction_requests.summary import compaction_summary

    return compaction_summary(preparation)


async def _summarize_branch(preparation, ctx):
    from pi_compaction_requests.summary import branch_summary

    return branch_summary(preparation)


@hookimpl
def register_compaction_strategies():
    return [CompactionStrategy(name=NAME, summarize=_summarize, summarize_branch=_summarize_branch)]

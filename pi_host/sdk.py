"""Running an agent from Python without the CLI: where the pieces are put together.

import asyncio, pi_host

async def main():
    session = await pi_host.create_session(model="faux/faux-1", cwd=".")
    await session.prompt("List the files")
    print(session.last_assistant().text())

asyncio.run(main())

:func:`create_session` loads plugins the way the CLI does (project trust included), builds the
model catalog, opens a store, wires the compaction mechanism into the session and starts it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pi_host.runtime.factory import SessionOptions, build_session, open_store
from pi_host.session.agent_session import AgentSession

__all__ = ["SessionOptions", "create_session", "open_store", "run_prompt"]


async def create_session(options: SessionOptions | None = None, **kwargs: Any) -> AgentSession:
    """Load plugins, pick the model and open a session store; returns an idle, started session
    (built by :func:`pi_host.runtime.factory.build_session`)."""
    return await build_session(options or SessionOptions(**kwargs))


def run_prompt(prompt: str, **kwargs: Any) -> Any:
    """Run one prompt to completion synchronously; returns the final assistant message."""

    async def main() -> Any:
        session = await create_session(**kwargs)
        try:
            await session.prompt(prompt)
            return session.last_assistant()
        finally:
            await session.close()

    return asyncio.run(main())

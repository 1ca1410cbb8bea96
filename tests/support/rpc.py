"""Starting pi-host (and pi 1.6.0) in RPC mode against the loopback OpenAI-compatible server.

Every process gets its own agent dir, home, cache and working directory under a tmp dir; nothing
reaches the real home or the network beyond 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from pi_host.rpc import RpcClient
from tests.support.loopback import LoopbackServer, Reply, write_models_json
from tests.support.pi_node import find_pi, pi_env

PI = find_pi()

requires_pi = pytest.mark.skipif(PI is None, reason="pi 1.6.0 (node) is not installed under .tools/")


@dataclass
class World:
    """The directories of one agent process."""

    root: Path
    agent: Path
    home: Path
    work: Path
    sessions: Path

    @classmethod
    def make(cls, root: Path) -> World:
        world = cls(root, root / "agent", root / "home", root / "work", root / "sessions")
        for directory in (world.agent, world.home, world.work, world.sessions):
            directory.mkdir(parents=True, exist_ok=True)
        (world.agent / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}}))
        return world


def _clean_environ() -> dict[str, str]:
    drop = ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN")
    return {
        key: value
        for key, value in os.environ.items()
        if not key.endswith("_API_KEY") and not key.startswith(("PI_", "PYTEST_")) and key not in drop
    }


def pi_host_env(world: World) -> dict[str, str]:
    env = _clean_environ()
    env.update(
        HOME=str(world.home),
        PI_CODING_AGENT_DIR=str(world.agent),
        PI_HOST_CACHE_DIR=os.environ.get("PI_HOST_CACHE_DIR")
        or str(world.root / "cache"),  # the run's warm cache
        XDG_CACHE_HOME=str(world.root / "xdg-cache"),
        PI_TELEMETRY="0",
        PI_OFFLINE="1",
    )
    return env


def node_pi_env(world: World) -> dict[str, str]:
    env = pi_env(str(world.agent))
    env["HOME"] = str(world.home)
    return env


def pi_host_client(
    world: World,
    server: LoopbackServer,
    *args: str,
    timeout: float = 30,
    env: dict[str, str] | None = None,
) -> RpcClient:
    """pi-host in RPC mode on model ``loop/loop-1`` (``env`` adds variables)."""
    write_models_json(world.agent, server.url)
    return RpcClient(
        args=["--model", "loop/loop-1", *args],
        cwd=world.work,
        env={**pi_host_env(world), **(env or {})},
        timeout=timeout,
    )


def node_pi_client(world: World, server: LoopbackServer, *args: str, timeout: float = 30) -> RpcClient:
    assert PI is not None
    node, cli = PI
    write_models_json(world.agent, server.url)
    return RpcClient(
        [node, cli, "--mode", "rpc"],
        args=["--model", "loop/loop-1", *args],
        cwd=world.work,
        env=node_pi_env(world),
        timeout=timeout,
    )


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World.make(tmp_path / "rpc")


@contextmanager
def pi_host_rpc(
    world: World, replies: list[Reply | str], *args: str
) -> Iterator[tuple[RpcClient, LoopbackServer]]:
    """pi-host in RPC mode with its own loopback server; the client is closed at the end."""
    with LoopbackServer(replies) as server:
        client = pi_host_client(world, server, *args)
        try:
            yield client, server
        finally:
            client.close()


PYTHON = sys.executable

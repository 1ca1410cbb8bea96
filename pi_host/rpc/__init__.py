"""Scripting pi-host (or pi) over its RPC protocol: see :mod:`pi_host.rpc.client` and docs/rpc.md."""

from __future__ import annotations

from pi_host.rpc.client import (
    DIALOG_METHODS,
    RpcClient,
    RpcClosedError,
    RpcError,
    RpcTimeoutError,
    UiAnswer,
)

__all__ = ["DIALOG_METHODS", "RpcClient", "RpcClosedError", "RpcError", "RpcTimeoutError", "UiAnswer"]

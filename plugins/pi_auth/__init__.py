"""``pi auth login <provider>`` and ``pi auth logout <provider>``, as pi 1.6.0's subcommands.

Signing in with a subscription (ChatGPT/Codex, GitHub Copilot, Kimi Code, xAI, Meta, OpenRouter)
runs the flows of :mod:`pi_host.config.oauth_providers` and stores the credential in auth.json in
pi's shape, so pi and pi-host share the login. ``--api-key`` stores a typed key instead.
"""

from pi_host import hookimpl
from pi_host.plugins.registrations import Subcommand


def _run(argv):
    from pi_auth.cli import run

    return run(argv)


@hookimpl
def register_subcommands():
    return [Subcommand("auth", _run, "Log in to and out of model providers (subscriptions or API keys)")]

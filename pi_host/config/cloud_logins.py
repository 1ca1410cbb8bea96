"""``/login`` and ``pi auth login`` for the providers set up with more than a key (issue 32).

pi 1.6.0 asks these providers' questions when you log in to them, and stores the answers in
``auth.json`` as an ``api_key`` entry: a ``key`` when one was typed, and an ``env`` object with
the variables the provider reads (pi's request reads them from there as from the environment,
see :meth:`pi_host.config.credentials.AuthStorage.env_for`):

================================  ============================================================
``amazon-bedrock``                a bearer token, an AWS profile (``AWS_PROFILE``), or the AWS
                                  credential chain already configured (nothing stored but the
                                  choice)
``google-vertex``                 a Google Cloud API key, or application default credentials /
                                  a service-account file with ``GOOGLE_CLOUD_PROJECT`` and
                                  ``GOOGLE_CLOUD_LOCATION`` (and ``GOOGLE_APPLICATION_CREDENTIALS``)
``cloudflare-workers-ai``         an API key and ``CLOUDFLARE_ACCOUNT_ID``
``cloudflare-ai-gateway``         an API key, ``CLOUDFLARE_ACCOUNT_ID`` and ``CLOUDFLARE_GATEWAY_ID``
================================  ============================================================

The flows use :class:`pi_host.config.oauth_login.Interaction`, like the subscription sign-ins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_host.config.oauth_http import OAuthError
from pi_host.config.oauth_login import CANCELLED, Interaction


@dataclass(frozen=True)
class CloudLogin:
    name: str
    login: Callable[[Interaction], dict[str, Any]]


def _answer(value: str | None, interaction: Interaction) -> str:
    interaction.check()
    if value is None:  # the dialog was closed, or standard input ended
        raise OAuthError(CANCELLED)
    return value.strip()


def _text(interaction: Interaction, message: str) -> str:
    return _answer(interaction.text(message, ""), interaction)


def _secret(interaction: Interaction, message: str) -> str:
    ask = interaction.secret or (lambda text: interaction.text(text, ""))
    return _answer(ask(message), interaction)


def _choose(interaction: Interaction, message: str, options: list[tuple[str, str]]) -> str:
    return _answer(interaction.select(message, options), interaction)


def _bedrock(interaction: Interaction) -> dict[str, Any]:
    method = _choose(
        interaction,
        "Select Amazon Bedrock authentication method:",
        [
            ("bearer-token", "Bearer token"),
            ("aws-profile", "AWS profile"),
            ("credential-chain", "Existing AWS credential chain"),
        ],
    )
    if method == "bearer-token":
        return {"type": "api_key", "key": _secret(interaction, "Enter Amazon Bedrock bearer token")}
    interaction.notify(
        {
            "type": "info",
            "message": "Amazon Bedrock supports AWS profiles, IAM credentials, and role-based credentials.",
            "links": [
                {
                    "label": "AWS credential provider chain",
                    "url": "https://docs.aws.amazon.com/sdkref/latest/guide/standardized-credentials.html",
                }
            ],
        }
    )
    if method == "aws-profile":
        return {"type": "api_key", "env": {"AWS_PROFILE": _text(interaction, "Enter AWS profile name")}}
    _answer(interaction.text("Configure AWS credentials, then press Enter to continue", ""), interaction)
    return {"type": "api_key"}


def _vertex(interaction: Interaction) -> dict[str, Any]:
    method = _choose(
        interaction,
        "Select Google Vertex AI authentication method:",
        [
            ("api-key", "Google Cloud API key"),
            ("adc", "Application Default Credentials"),
            ("service-account", "Service account credentials file"),
        ],
    )
    if method == "api-key":
        return {"type": "api_key", "key": _secret(interaction, "Enter Google Cloud API key")}
    adc = method == "adc"
    interaction.notify(
        {
            "type": "info",
            "message": "Run `gcloud auth application-default login`, then provide the project and location."
            if adc
            else "Provide a service account credentials file, project, and location.",
            "links": [
                {
                    "label": "Application Default Credentials",
                    "url": "https://cloud.google.com/docs/authentication/provide-credentials-adc",
                }
            ],
        }
    )
    env = {
        "GOOGLE_CLOUD_PROJECT": _text(interaction, "Enter Google Cloud project ID"),
        "GOOGLE_CLOUD_LOCATION": _text(interaction, "Enter Google Cloud location"),
    }
    if not adc:
        env["GOOGLE_APPLICATION_CREDENTIALS"] = _text(
            interaction, "Enter service account credentials file path"
        )
    return {"type": "api_key", "env": env}


def _cloudflare(gateway: bool) -> Callable[[Interaction], dict[str, Any]]:
    def login(interaction: Interaction) -> dict[str, Any]:
        key = _secret(interaction, "Enter Cloudflare API key")
        env = {"CLOUDFLARE_ACCOUNT_ID": _text(interaction, "Enter Cloudflare account ID")}
        if gateway:
            env["CLOUDFLARE_GATEWAY_ID"] = _text(interaction, "Enter Cloudflare AI Gateway ID")
        return {"type": "api_key", "key": key, "env": env}

    return login


CLOUD_LOGINS: dict[str, CloudLogin] = {
    "amazon-bedrock": CloudLogin("Amazon Bedrock", _bedrock),
    "google-vertex": CloudLogin("Google Vertex AI", _vertex),
    "cloudflare-workers-ai": CloudLogin("Cloudflare Workers AI", _cloudflare(gateway=False)),
    "cloudflare-ai-gateway": CloudLogin("Cloudflare AI Gateway", _cloudflare(gateway=True)),
}

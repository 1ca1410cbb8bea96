"""The ``anthropic-messages`` provider API and Anthropic's model catalog.

The catalog is the data file ``models.json`` next to this module; the adapter lives in
``pi_provider_anthropic.stream`` and is imported only when a request is made.
"""

from pi_host import hookimpl

API = "anthropic-messages"


def _stream(model, context, options):
    from pi_provider_anthropic.stream import stream

    return stream(model, context, options)


@hookimpl
def register_providers():
    from pi_host.plugins.registrations import ProviderApi

    return [ProviderApi(api=API, stream=_stream)]


@hookimpl
def register_models():
    import json
    from pathlib import Path

    from pi_host.plugins.registrations import ProviderInfo

    data = json.loads((Path(__file__).parent / "models.json").read_text(encoding="utf-8"))
    return [
        ProviderInfo(
            id=data["provider"],
            api=data["api"],
            base_url=data["baseUrl"],
            env_keys=list(data["envKeys"]),
            models=data["models"],
            default_model=data.get("defaultModel"),
            rank=data.get("rank", 100),
        )
    ]

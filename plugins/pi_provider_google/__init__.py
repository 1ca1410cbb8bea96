"""Google Gemini (``google-generative-ai``): thought parts and signatures, function calls and
responses, thinkingLevel / thinkingBudget; plus the Gemini catalog.

Kept thin: the implementation modules load on the first request.
"""

from pi_host import hookimpl


def _stream(model, context, options):
    from pi_provider_google.stream import stream_google

    return stream_google(model, context, options)


@hookimpl
def register_providers():
    from pi_host.plugins.registrations import ProviderApi

    return [ProviderApi(api="google-generative-ai", stream=_stream)]


@hookimpl
def register_models():
    import json
    from pathlib import Path

    from pi_host.plugins.registrations import ProviderInfo

    data = json.loads((Path(__file__).parent / "catalog" / "google.json").read_text(encoding="utf-8"))
    return [
        ProviderInfo(
            id=data["id"],
            api=data["api"],
            base_url=data["baseUrl"],
            env_keys=list(data.get("envKeys") or ()),
            models=list(data["models"]),
            default_model=data.get("defaultModel"),
            rank=data.get("rank", 100),
        )
    ]

"""The ``faux`` provider: scripted answers through the real streaming path, for tests and demos.

Responses come from :func:`set_responses` (SDK and tests) or from the ``PI_FAUX_SCRIPT``
environment variable (a JSON file path or inline JSON), one per request. See ``script.py`` for the
response shape. With nothing scripted, the model echoes the last user message.
"""

from pi_host import hookimpl
from pi_host.plugins.registrations import ProviderApi, ProviderInfo
from pi_provider_faux.script import add_responses, clear, requests, set_responses

__all__ = ["add_responses", "clear", "requests", "set_responses"]

API = "faux"


def _stream(model, context, options):
    from pi_provider_faux.stream import stream

    return stream(model, context, options)


@hookimpl
def register_providers():
    return [ProviderApi(api=API, stream=_stream)]


@hookimpl
def register_models():
    return [
        ProviderInfo(
            id="faux",
            api=API,
            base_url="faux://local",
            needs_key=False,
            auto_select=False,  # a script, never the model a user gets by default
            default_model="faux-1",
            models=[
                {"id": "faux-1", "name": "Faux 1", "contextWindow": 128000, "maxTokens": 16384},
                # a small window, so compaction is easy to trigger in tests and demos
                {"id": "faux-small", "name": "Faux Small", "contextWindow": 8000, "maxTokens": 2048},
                {
                    "id": "faux-reasoner",
                    "name": "Faux Reasoner",
                    "reasoning": True,
                    "input": ["text", "image"],
                    "contextWindow": 200000,
                    "maxTokens": 32000,
                },
            ],
        )
    ]

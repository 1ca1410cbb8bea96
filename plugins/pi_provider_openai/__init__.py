"""OpenAI wire APIs: ``openai-completions`` (OpenAI and every OpenAI-compatible server) and
``openai-responses``. The models are pi's catalog (plugin ``pi_provider_catalog``).

Kept thin: the implementation modules (httpx, pydantic) load on the first request.
"""

from pi_host import hookimpl


def _completions(model, context, options):
    from pi_provider_openai.completions import stream_completions

    return stream_completions(model, context, options)


def _responses(model, context, options):
    from pi_provider_openai.responses import stream_responses

    return stream_responses(model, context, options)


@hookimpl
def register_providers():
    from pi_host.plugins.registrations import ProviderApi

    return [
        ProviderApi(api="openai-completions", stream=_completions),
        ProviderApi(api="openai-responses", stream=_responses),
    ]

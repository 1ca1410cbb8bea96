"""OpenAI wire APIs: ``openai-completions`` (OpenAI and every OpenAI-compatible server),
``openai-responses``, ``azure-openai-responses`` (Azure OpenAI), ``openai-codex-responses`` (ChatGPT
plans through the Codex backend) and ``mistral-conversations``
(Mistral's chat completions). The models are
pi's catalog (plugin ``pi_provider_catalog``).

Kept thin: the implementation modules (httpx, pydantic) load on the first request.
"""

from pi_host import hookimpl


def _completions(model, context, options):
    from pi_provider_openai.completions import stream_completions

    return stream_completions(model, context, options)


def _responses(model, context, options):
    from pi_provider_openai.responses import stream_responses

    return stream_responses(model, context, options)


def _azure(model, context, options):
    from pi_provider_openai.azure import stream_azure_responses

    return stream_azure_responses(model, context, options)


def _codex(model, context, options):
    from pi_provider_openai.codex import stream_codex

    return stream_codex(model, context, options)


def _mistral(model, context, options):
    # pi 1.6.0 talks to Mistral through its own SDK, which posts OpenAI-shaped chat completions
    # to <baseUrl>/v1/chat/completions; the completions adapter (Mistral compat is detected from
    # the provider and host) sends the same request once the base URL carries the /v1.
    from pi_provider_openai.completions import stream_completions

    base = model.base_url.rstrip("/")
    if not base.endswith("/v1"):
        model = model.model_copy(update={"base_url": base + "/v1"})
    return stream_completions(model, context, options)


@hookimpl
def register_providers():
    from pi_host.plugins.registrations import ProviderApi

    return [
        ProviderApi(api="openai-completions", stream=_completions),
        ProviderApi(api="openai-responses", stream=_responses),
        ProviderApi(api="mistral-conversations", stream=_mistral),
        ProviderApi(api="azure-openai-responses", stream=_azure),
        ProviderApi(api="openai-codex-responses", stream=_codex),
    ]

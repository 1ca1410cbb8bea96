"""Google Gemini (``google-generative-ai``, and ``google-vertex``: Gemini on Vertex AI with
application default credentials): thought parts and signatures, function calls and
responses, thinkingLevel / thinkingBudget. The models are pi's catalog (``pi_provider_catalog``).

Kept thin: the implementation modules load on the first request.
"""

from pi_host import hookimpl


def _stream(model, context, options):
    from pi_provider_google.stream import stream_google

    return stream_google(model, context, options)


def _vertex(model, context, options):
    from pi_provider_google.vertex import stream_vertex

    return stream_vertex(model, context, options)


@hookimpl
def register_providers():
    from pi_host.plugins.registrations import ProviderApi

    return [
        ProviderApi(api="google-generative-ai", stream=_stream),
        ProviderApi(api="google-vertex", stream=_vertex),
    ]

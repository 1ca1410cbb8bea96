"""The ``anthropic-messages`` provider API.

The models are pi's catalog (plugin ``pi_provider_catalog``); the adapter lives in
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

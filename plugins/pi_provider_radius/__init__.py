"""Radius (``pi-messages``): pi's own message protocol spoken to a gateway. The request is one
POST of ``{model, context, options}`` to ``<baseUrl>/messages`` and the answer is an SSE stream
of pi's assistant-message events ending in ``done`` or ``error``. The models are pi's catalog
(``pi_provider_catalog``, which also fetches the gateway's own list for a key:
:mod:`pi_provider_catalog.radius_gateway`); the OAuth login is :mod:`pi_host.config.oauth_radius`.

Kept thin: the adapter loads on the first ``pi-messages`` request only.
"""

from pi_host import hookimpl

API = "pi-messages"


def _stream(model, context, options):
    from pi_provider_radius.stream import stream

    return stream(model, context, options)


@hookimpl
def register_providers():
    from pi_host.plugins.registrations import ProviderApi

    return [ProviderApi(api=API, stream=_stream)]

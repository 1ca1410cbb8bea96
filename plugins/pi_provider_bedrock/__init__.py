"""Amazon Bedrock (``bedrock-converse-stream``): the ConverseStream API with AWS event-stream
framing, SigV4 signing and the standard AWS credential chain (botocore, extra
``pi-host[bedrock]``) or a Bedrock bearer token. The models are pi's catalog
(``pi_provider_catalog``).

Kept thin: the adapter, and botocore, load on the first Bedrock request only.
"""

from pi_host import hookimpl

API = "bedrock-converse-stream"


def _stream(model, context, options):
    from pi_provider_bedrock.stream import stream_bedrock

    return stream_bedrock(model, context, options)


@hookimpl
def register_providers():
    from pi_host.plugins.registrations import ProviderApi

    return [ProviderApi(api=API, stream=_stream)]

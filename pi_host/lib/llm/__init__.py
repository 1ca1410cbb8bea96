"""The shared layer for provider plugins (public API; see ``docs/providers.md``).

Modules, each with one purpose:

* :mod:`pi_host.lib.llm.builder`      ``MessageBuilder`` grows the partial message and makes events;
                                  ``guard`` turns failures and aborts into a terminal ``error``.
* :mod:`pi_host.lib.llm.partial_json` tool-call arguments: jiter partial parse, strict final parse.
* :mod:`pi_host.lib.llm.http`         shared httpx client, ``open_sse`` with retries, redirects and
                                  timeouts, ``request_headers`` and the ``stream_event_hook`` bridge.
* :mod:`pi_host.lib.llm.errors`       one line per failure (``ProviderHTTPError``, ``ProviderTimeout``).
* :mod:`pi_host.lib.llm.redact`       keys and token-shaped strings out of error texts (``Redactor``).
* :mod:`pi_host.lib.llm.sse`          a fast server-sent-events reader (``SSEResponse.batches()``).
* :mod:`pi_host.config.credentials`  config values (``!cmd``, ``$VAR``) and ``auth.json``.
* :mod:`pi_host.lib.llm.transform`    the cross-model transform (reference §3.7), id normalisation,
                                  surrogate scrubbing (``scrub_body``).

The system prompt a request carries comes from :mod:`pi_host.protocol.transcript`
(``replay_system``, ``split_system``, ``patch_text``).
* :mod:`pi_host.lib.llm.usage`        totals and cost from $/M-token prices (tiers).
* :mod:`pi_host.protocol.failures`     context-overflow and transient-error classification.
* :mod:`pi_host.lib.llm.tokens`       output-token cap and thinking budgets (reference §3.2).

Nothing is imported here so that importing a plugin module stays cheap.
"""

"""The TLS context of pi-host's HTTP clients, with its CA bundle loaded on first TLS use.

httpx builds a context and loads the whole CA bundle (~40 ms) whenever a client is made, also
for the many runs that only ever talk ``http://`` to a local server (Ollama, llama.cpp, vLLM,
the tests). This context is the one httpx would build (``SSL_CERT_FILE``, ``SSL_CERT_DIR``,
else certifi's bundle) but reads the bundle when the first TLS connection is wrapped.
"""

from __future__ import annotations

import os
import ssl
import threading
from typing import Any

_lock = threading.Lock()


class LazyTrustContext(ssl.SSLContext):
    """An ``ssl.SSLContext`` for clients that loads its trusted CAs just before first use."""

    _trust_loaded = False

    def _load_trust(self) -> None:
        if self._trust_loaded:
            return
        with _lock:
            if not self._trust_loaded:
                if os.environ.get("SSL_CERT_FILE"):
                    self.load_verify_locations(cafile=os.environ["SSL_CERT_FILE"])
                elif os.environ.get("SSL_CERT_DIR"):
                    self.load_verify_locations(capath=os.environ["SSL_CERT_DIR"])
                else:
                    import certifi

                    self.load_verify_locations(cafile=certifi.where())
                self._trust_loaded = True

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        self._load_trust()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        self._load_trust()
        return super().wrap_bio(*args, **kwargs)


def client_tls_context() -> LazyTrustContext:
    """What ``ssl.create_default_context()`` gives a client (hostname checks, certificates
    required, the default protocol floor), minus the CA loading."""
    context = LazyTrustContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    keylog = os.environ.get("SSLKEYLOGFILE")
    if keylog and hasattr(context, "keylog_filename"):
        context.keylog_filename = keylog  # as create_default_context honours it
    return context

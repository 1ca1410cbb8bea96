"""HTTPS to a provider: certificates are checked as httpx checks them (``SSL_CERT_FILE``,
``SSL_CERT_DIR``, else certifi), but the CA bundle is only read once a TLS connection is made,
so runs against ``http://`` local servers never pay for it."""

from __future__ import annotations

import shutil
import ssl

import pytest

from pi_host.lib.llm.http import create_client
from pi_host.lib.llm.tls import LazyTrustContext

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


def test_a_client_reads_no_certificates_until_it_speaks_tls():
    client = create_client()
    pool = client._transport._pool  # the context httpx hands to its connections
    assert isinstance(pool._ssl_context, LazyTrustContext)
    assert pool._ssl_context.cert_store_stats()["x509_ca"] == 0
    assert pool._ssl_context.verify_mode == ssl.CERT_REQUIRED and pool._ssl_context.check_hostname

"""HTTPS to a provider: certificates are checked as httpx checks them (``SSL_CERT_FILE``,
``SSL_CERT_DIR``, else certifi), but the CA bundle is only read once a TLS connection is made,
so runs against ``http://`` local servers never pay for it."""

from __future__ import annotations

import shutil
import ssl
import subprocess

import pytest

from tests.support.loopback import PRINT, LoopbackServer, Reply, write_models_json
from tests.support.pi import run_pi

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


@pytest.fixture
def certificate(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"]
        + ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


@pytest.fixture
def tls_server(certificate):
    cert, key = certificate
    server = LoopbackServer([Reply("over tls")])
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server.httpd.socket = context.wrap_socket(server.httpd.socket, server_side=True)
    server.url = server.url.replace("http://", "https://")
    with server.start():
        yield server


def cert_setting(name: str) -> bool:
    """The variables left out of pi's environment: only a test's own certificate settings count."""
    return name in ("SSL_CERT_FILE", "SSL_CERT_DIR")


def test_https_with_a_trusted_certificate_streams_the_answer(isolated_environment, tls_server, certificate):
    write_models_json(isolated_environment["agent"], tls_server.url)
    out = run_pi(*PRINT, "hi", env={"SSL_CERT_FILE": str(certificate[0])}, drop=cert_setting)
    assert out.returncode == 0, out.stderr
    assert "over tls" in out.stdout
    assert tls_server.requests and tls_server.requests[0]["messages"][-1]["content"] in (
        "hi",
        [{"type": "text", "text": "hi"}],
    )


def test_an_untrusted_certificate_is_refused_in_one_line(isolated_environment, tls_server):
    write_models_json(isolated_environment["agent"], tls_server.url)
    # A refused certificate is a connection error, retried with backoff by default: not here.
    (isolated_environment["agent"] / "settings.json").write_text('{"retry": {"enabled": false}}')
    out = run_pi(*PRINT, "hi", drop=cert_setting)  # certifi's bundle does not hold a self-signed certificate
    assert out.returncode != 0
    assert "certificate" in out.stderr.lower() or "certificate" in out.stdout.lower()
    assert not tls_server.requests

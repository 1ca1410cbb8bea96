"""Gemini on Vertex AI (``google-vertex``) against a loopback server: application default
credentials (a service account's signed JWT, gcloud's authorized-user refresh token) exchanged at
a loopback token endpoint, the bearer token on the model request, the endpoint built from the
project and location, and a streamed answer with a tool call."""

from __future__ import annotations

import base64
import json
import urllib.parse

import pytest
from pi_provider_google import vertex

from pi_host.config.models import ModelRegistry
from pi_host.plugins.selection import PluginRequest, load_plugins
from tests.support.providers.openai_google import (  # noqa: F401 - fixtures
    collect,
    context,
    final,
    make_model,
    module_server_fixture,
    options,
    sse_fixture,
)
from tests.support.providers.sse import Reply

TOKEN = "ya29.loopback-access-token-0123456789"
MODEL_PATH = "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


def _b64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


@pytest.fixture(scope="module")
def rsa_key():
    from cryptography.hazmat.primitives.asymmetric import rsa

    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def service_account(rsa_key, token_uri):
    from cryptography.hazmat.primitives import serialization

    pem = rsa_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return {
        "type": "service_account",
        "project_id": "proj-1",
        "private_key_id": "kid-1",
        "private_key": pem,
        "client_email": "pi@proj-1.iam.gserviceaccount.com",
        "token_uri": token_uri,
    }


def vertex_registry(agent, base_url):
    (agent / "models.json").write_text(json.dumps({"providers": {"google-vertex": {"baseUrl": base_url}}}))
    return ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=str(agent))).host)


async def run(registry, model):
    key = registry.get_api_key(model.provider)
    return await collect(registry.stream_fn(model)(model, context(), options(api_key=key)))


def adc_model(adc, path, monkeypatch, agent, base_url):
    """``adc`` written to ``path`` as GOOGLE_APPLICATION_CREDENTIALS; the registry and Gemini model."""
    path.write_text(json.dumps(adc))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj-3")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    registry = vertex_registry(agent, base_url)
    return registry, registry.find("google-vertex", "gemini-2.5-flash")


async def test_service_account_jwt_exchange_and_tool_call(
    sse, rsa_key, isolated_environment, monkeypatch, tmp_path
):
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    path = tmp_path / "sa.json"
    path.write_text(json.dumps(service_account(rsa_key, sse.url + "/token")))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj-1")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    registry = vertex_registry(isolated_environment["agent"], sse.url)
    model = registry.find("google-vertex", "gemini-2.5-flash")
    assert registry.get_api_key("google-vertex") == "<authenticated>"  # ambient credentials
    sse.enqueue(
        Reply.json(200, {"access_token": TOKEN, "expires_in": 3599, "token_type": "Bearer"}), path="/token"
    )
    sse.enqueue(
        Reply.from_fixture("google/google_tools.sse", chunk_size=17),
        Reply.from_fixture("google/google_tools.sse"),
    )
    events = await run(registry, model)
    message = final(events)
    assert events[-1].type == "done", message.error_message
    assert message.stop_reason == "toolUse" and message.tool_calls() and message.api == "google-vertex"
    token_request, model_request = sse.requests
    assert token_request.path == "/token"
    form = dict(urllib.parse.parse_qsl(token_request.body.decode()))
    assert form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    head, claims, signature = form["assertion"].split(".")
    assert json.loads(_b64(head)) == {"alg": "RS256", "typ": "JWT", "kid": "kid-1"}
    claims = json.loads(_b64(claims))
    assert claims["iss"] == "pi@proj-1.iam.gserviceaccount.com" and claims["aud"] == sse.url + "/token"
    assert claims["scope"] == "https://www.googleapis.com/auth/cloud-platform"
    assert claims["exp"] - claims["iat"] == 3600
    rsa_key.public_key().verify(
        _b64(signature),
        f"{head}.{form['assertion'].split('.')[1]}".encode(),
        padding.PKCS1v15(),
        hashes.SHA256(),
    )
    assert model_request.path == MODEL_PATH
    assert model_request.headers["authorization"] == f"Bearer {TOKEN}"
    body = model_request.json
    assert (
        body["contents"][0]["role"] == "user"
        and body["tools"][0]["functionDeclarations"][0]["name"] == "read"
    )
    # The token is reused until shortly before it expires: the second request asks for none.
    await run(registry, model)
    assert [r.path for r in sse.requests].count("/token") == 1


async def test_gcloud_authorized_user_refresh_and_quota_project(sse, isolated_environment, monkeypatch):
    home = isolated_environment["home"]
    gcloud = home / ".config" / "gcloud"
    gcloud.mkdir(parents=True)
    refresh = "1//loopback-refresh-token-secret"
    adc = {
        "type": "authorized_user",
        "client_id": "cid.apps.googleusercontent.com",
        "client_secret": "client-secret-value",
        "refresh_token": refresh,
        "quota_project_id": "billing-proj",
        "token_uri": sse.url + "/token",
    }
    (gcloud / "application_default_credentials.json").write_text(json.dumps(adc))
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("GCLOUD_PROJECT", "proj-2")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "global")
    registry = vertex_registry(isolated_environment["agent"], sse.url + "/v1beta1")
    model = registry.find("google-vertex", "gemini-2.5-flash")
    sse.enqueue(Reply.json(200, {"access_token": TOKEN, "expires_in": 3600}), path="/token")
    sse.enqueue(Reply.from_fixture("google/google_tools.sse", chunk_size=29))
    message = final(await run(registry, model))
    assert message.stop_reason == "toolUse", message.error_message
    form = dict(urllib.parse.parse_qsl(sse.requests[0].body.decode()))
    assert form == {
        "grant_type": "refresh_token",
        "client_id": "cid.apps.googleusercontent.com",
        "client_secret": "client-secret-value",
        "refresh_token": refresh,
    }
    request = sse.requests[1]
    # A base URL that names its version gets none added.
    assert request.path == "/v1beta1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-user-project"] == "billing-proj"
    # A refused refresh is one error event that names the endpoint's answer, not the token.
    gcloud.joinpath("application_default_credentials.json").write_text(
        json.dumps({**adc, "client_id": "other"})
    )
    sse.enqueue(
        Reply.json(
            400, {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
        ),
        path="/token",
    )
    events = await run(registry, model)
    assert [e.type for e in events] == ["error"]
    text = events[0].error.error_message
    assert "invalid_grant" in text and "expired or revoked" in text and refresh not in text


def test_endpoints_from_project_location_and_key(monkeypatch):
    model = make_model(
        "https://{location}-aiplatform.googleapis.com", api="google-vertex", id="gemini-2.5-pro"
    )
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p1")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
    action = "publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    assert vertex.endpoint(model, options(), express=False) == (
        f"https://europe-west4-aiplatform.googleapis.com/v1/projects/p1/locations/europe-west4/{action}"
    )
    scoped = options(extra={"env": {"GOOGLE_CLOUD_LOCATION": "global", "GOOGLE_CLOUD_PROJECT": "p2"}})
    assert vertex.endpoint(model, scoped, express=False) == (
        f"https://aiplatform.googleapis.com/v1/projects/p2/locations/global/{action}"
    )
    assert vertex.endpoint(model, options(), express=True) == f"https://aiplatform.googleapis.com/v1/{action}"
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT")
    monkeypatch.delenv("GCLOUD_PROJECT", raising=False)
    with pytest.raises(ValueError, match="GOOGLE_CLOUD_PROJECT"):
        vertex.endpoint(model, options(), express=False)


async def test_api_key_is_express_mode(sse, isolated_environment, monkeypatch):
    monkeypatch.setenv("GOOGLE_CLOUD_API_KEY", "AIza-loopback-vertex-key-123456")
    registry = vertex_registry(isolated_environment["agent"], sse.url)
    model = registry.find("google-vertex", "gemini-2.5-flash")
    sse.enqueue(Reply.from_fixture("google/google_tools.sse"))
    message = final(await run(registry, model))
    assert message.stop_reason == "toolUse", message.error_message
    assert sse.last.path == MODEL_PATH
    assert sse.last.headers["x-goog-api-key"] == "AIza-loopback-vertex-key-123456"
    assert "authorization" not in sse.last.headers


async def test_workload_identity_federation_with_impersonation(
    sse, isolated_environment, monkeypatch, tmp_path
):
    subject = "eyJhbGciOi.loopback-oidc-subject-token.sig"
    (tmp_path / "oidc.json").write_text(json.dumps({"id_token": subject}))
    federated, final_token = "federated-sts-token-0123", "ya29.impersonated-token-4567"
    adc = {
        "type": "external_account",
        "audience": "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/gh",
        "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "token_url": sse.url + "/sts",
        "credential_source": {
            "file": str(tmp_path / "oidc.json"),
            "format": {"type": "json", "subject_token_field_name": "id_token"},
        },
        "service_account_impersonation_url": sse.url + "/impersonate",
        "service_account_impersonation": {"token_lifetime_seconds": 1800},
        "quota_project_id": "billing-wif",
    }
    registry, model = adc_model(
        adc, tmp_path / "wif.json", monkeypatch, isolated_environment["agent"], sse.url
    )
    sse.enqueue(Reply.json(200, {"access_token": federated, "expires_in": 3600}), path="/sts")
    sse.enqueue(
        Reply.json(200, {"accessToken": final_token, "expireTime": "2099-01-01T00:00:00Z"}),
        path="/impersonate",
    )
    sse.enqueue(Reply.from_fixture("google/google_tools.sse"))
    message = final(await run(registry, model))
    assert message.stop_reason == "toolUse", message.error_message
    sts, impersonate, model_request = sse.requests
    assert sts.method == "POST" and dict(urllib.parse.parse_qsl(sts.body.decode())) == {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "audience": adc["audience"],
        "scope": "https://www.googleapis.com/auth/cloud-platform",
        "requested_token_type": "urn:ietf:params:oauth:token-type:access_token",
        "subject_token": subject,
        "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
    }
    assert impersonate.headers["authorization"] == f"Bearer {federated}"
    assert impersonate.json == {
        "scope": ["https://www.googleapis.com/auth/cloud-platform"],
        "lifetime": "1800s",
    }
    assert model_request.headers["authorization"] == f"Bearer {final_token}"
    assert model_request.headers["x-goog-user-project"] == "billing-wif"
    # the token is kept until shortly before expireTime: the next run exchanges nothing
    sse.enqueue(Reply.from_fixture("google/google_tools.sse"))
    await run(registry, model)
    assert [r.path for r in sse.requests].count("/sts") == 1
    # a refused exchange is one error naming the endpoint's answer, never a token
    (tmp_path / "wif.json").write_text(json.dumps({**adc, "service_account_impersonation_url": None}))
    sse.enqueue(Reply.json(400, {"error": "invalid_grant", "error_description": "bad audience"}), path="/sts")
    events = await run(registry, model)
    assert [e.type for e in events] == ["error"]
    text = events[0].error.error_message
    assert "invalid_grant" in text and "bad audience" in text and subject not in text


async def test_url_sourced_subject_and_refused_sources(sse, isolated_environment, monkeypatch, tmp_path):
    adc = {
        "type": "external_account",
        "audience": "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/az",
        "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "token_url": sse.url + "/sts",
        "credential_source": {"url": sse.url + "/subject", "headers": {"Metadata": "True"}},
        "client_id": "wif-client",
        "client_secret": "wif-secret",
    }
    path = tmp_path / "wif.json"
    registry, model = adc_model(adc, path, monkeypatch, isolated_environment["agent"], sse.url)
    sse.enqueue(Reply.json(200, "plain-subject-token\n"), path="/subject")
    sse.enqueue(Reply.json(200, {"access_token": TOKEN, "expires_in": 3600}), path="/sts")
    sse.enqueue(Reply.from_fixture("google/google_tools.sse"))
    message = final(await run(registry, model))
    assert message.stop_reason == "toolUse", message.error_message
    subject, sts, model_request = sse.requests
    assert subject.method == "GET" and subject.headers["metadata"] == "True"
    form = dict(urllib.parse.parse_qsl(sts.body.decode()))
    assert form["subject_token"] == "plain-subject-token" and "options" not in form
    assert sts.headers["authorization"] == "Basic " + base64.b64encode(b"wif-client:wif-secret").decode()
    assert model_request.headers["authorization"] == f"Bearer {TOKEN}"
    # an executable source runs nothing without GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1
    # (test_adc_executable.py); an AWS source needs its verification URL (test_adc_aws.py)
    monkeypatch.delenv("GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES", raising=False)
    for source, words in (
        ({"executable": {"command": "/bin/echo token"}}, "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1"),
        (
            {"environment_id": "aws1", "region_url": "http://169.254.169.254"},
            "regional_cred_verification_url",
        ),
    ):
        path.write_text(json.dumps({**adc, "credential_source": source}))
        events = await run(registry, model)
        assert [e.type for e in events] == ["error"] and words in events[0].error.error_message


async def test_gcloud_impersonated_service_account(sse, isolated_environment, monkeypatch, tmp_path):
    adc = {
        "type": "impersonated_service_account",
        "service_account_impersonation_url": sse.url + "/impersonate",
        "delegates": ["projects/-/serviceAccounts/middle@proj.iam.gserviceaccount.com"],
        "source_credentials": {
            "type": "authorized_user",
            "client_id": "cid",
            "client_secret": "csecret",
            "refresh_token": "1//user-refresh-token",
            "token_uri": sse.url + "/token",
        },
    }
    registry, model = adc_model(
        adc, tmp_path / "imp.json", monkeypatch, isolated_environment["agent"], sse.url
    )
    sse.enqueue(Reply.json(200, {"access_token": "user-token-1", "expires_in": 3600}), path="/token")
    sse.enqueue(
        Reply.json(200, {"accessToken": TOKEN, "expireTime": "2099-01-01T00:00:00Z"}), path="/impersonate"
    )
    sse.enqueue(Reply.from_fixture("google/google_tools.sse"))
    message = final(await run(registry, model))
    assert message.stop_reason == "toolUse", message.error_message
    token, impersonate, model_request = sse.requests
    assert dict(urllib.parse.parse_qsl(token.body.decode()))["refresh_token"] == "1//user-refresh-token"
    assert impersonate.headers["authorization"] == "Bearer user-token-1"
    assert impersonate.json["delegates"] == adc["delegates"]
    assert model_request.headers["authorization"] == f"Bearer {TOKEN}"


async def test_without_a_credentials_file_the_gce_metadata_server_is_asked(
    sse, isolated_environment, monkeypatch
):
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("GCE_METADATA_HOST", sse.url.removeprefix("http://"))
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj-6")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    registry = vertex_registry(isolated_environment["agent"], sse.url)
    model = registry.find("google-vertex", "gemini-2.5-flash")
    token_path = "/computeMetadata/v1/instance/service-accounts/default/token"
    sse.enqueue(
        Reply.json(200, {"access_token": TOKEN, "expires_in": 3599, "token_type": "Bearer"}), path=token_path
    )
    sse.enqueue(Reply.from_fixture("google/google_tools.sse"))
    message = final(
        await collect(registry.stream_fn(model)(model, context(), options(api_key="<authenticated>")))
    )
    assert message.stop_reason == "toolUse", message.error_message
    metadata, model_request = sse.requests
    assert metadata.method == "GET" and metadata.headers["metadata-flavor"] == "Google"
    assert model_request.headers["authorization"] == f"Bearer {TOKEN}"
    # no file and nothing answering: one error naming both places
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")
    from pi_provider_google import adc

    adc._cache.clear()
    events = await collect(registry.stream_fn(model)(model, context(), options(api_key="<authenticated>")))
    assert [e.type for e in events] == ["error"]
    text = events[0].error.error_message
    assert (
        "No Google application default credentials" in text
        and "no GCE metadata server at 127.0.0.1:9" in text
    )

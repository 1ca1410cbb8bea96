"""Workload identity federation with an ``executable`` subject-token source (google-auth's
pluggable credentials) on Vertex AI: a temporary script run only when
GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1, its answer exchanged at a loopback STS, the
``output_file`` cache, and every way the script can fail."""

from __future__ import annotations

import json
import stat
import sys
import time
import urllib.parse

import pytest
from pi_provider_google import adc, adc_executable
from pi_provider_google.adc import CredentialsError

from pi_host.config.models import ModelRegistry
from pi_host.plugins.selection import PluginRequest, load_plugins
from tests.support.providers.openai_google import (  # noqa: F401 - fixtures
    collect,
    context,
    final,
    module_server_fixture,
    options,
    sse_fixture,
)
from tests.support.providers.sse import Reply

TOKEN = "ya29.loopback-executable-access-token"
SUBJECT = "eyJhbGciOi.executable-oidc-subject.sig"
AUDIENCE = "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/exe"
IMPERSONATION = "https://iamcredentials.example/v1/projects/-/serviceAccounts/sa@proj.iam.gserviceaccount.com:generateAccessToken"
SCRIPT = """\
#!{python}
import json, os, pathlib, sys, time
here = pathlib.Path(__file__).parent
seen = {{k: v for k, v in os.environ.items() if k.startswith("GOOGLE_EXTERNAL_ACCOUNT_")}}
(here / "ran.json").write_text(json.dumps({{"argv": sys.argv[1:], "env": seen}}))
mode = sys.argv[1]
ok = {{"version": 1, "success": True, "token_type": "urn:ietf:params:oauth:token-type:jwt",
      "id_token": "{subject}", "expiration_time": int(time.time()) + 3600}}
if mode == "ok":
    print(json.dumps(ok))
elif mode == "saml":
    print(json.dumps({{**ok, "token_type": "urn:ietf:params:oauth:token-type:saml2", "id_token": None,
                      "saml_response": "PHNhbWw+"}}))
elif mode == "file":
    pathlib.Path(os.environ["GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE"]).write_text(json.dumps(ok))
elif mode == "refused":
    print(json.dumps({{"version": 1, "success": False, "code": "401", "message": "caller not allowed"}}))
elif mode == "expired":
    print(json.dumps({{**ok, "expiration_time": 1}}))
elif mode == "crash":
    print("first line", flush=True)
    print("cannot reach the identity provider", file=sys.stderr)
    sys.exit(3)
elif mode == "sleep":
    time.sleep(30)
"""


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "token-helper"
    path.write_text(SCRIPT.format(python=sys.executable, subject=SUBJECT))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture(autouse=True)
def no_allowance(monkeypatch):
    monkeypatch.delenv(adc_executable.ALLOW_VARIABLE, raising=False)
    adc._cache.clear()


def info(script, mode="ok", **executable):
    return {
        "type": "external_account",
        "audience": AUDIENCE,
        "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "token_url": "http://127.0.0.1:9/sts",
        "credential_source": {"executable": {"command": f"{script} {mode}", **executable}},
    }


def ran(script):
    marker = script.parent / "ran.json"
    return json.loads(marker.read_text()) if marker.exists() else None


def subject(script, mode="ok", **executable):
    data = info(script, mode, **executable)
    return adc_executable.executable_subject_token(
        data, data["credential_source"]["executable"], CredentialsError
    )


async def test_allowed_executable_subject_exchanged_for_a_vertex_token(
    sse, script, isolated_environment, monkeypatch, tmp_path
):
    monkeypatch.setenv(adc_executable.ALLOW_VARIABLE, "1")
    data = {**info(script), "token_url": sse.url + "/sts", "service_account_impersonation_url": None}
    path = tmp_path / "wif.json"
    path.write_text(json.dumps(data))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj-exe")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    agent = isolated_environment["agent"]
    (agent / "models.json").write_text(json.dumps({"providers": {"google-vertex": {"baseUrl": sse.url}}}))
    registry = ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=str(agent))).host)
    model = registry.find("google-vertex", "gemini-2.5-flash")
    sse.enqueue(Reply.json(200, {"access_token": TOKEN, "expires_in": 3600}), path="/sts")
    sse.enqueue(Reply.from_fixture("google/google_tools.sse"))
    key = registry.get_api_key(model.provider)
    message = final(await collect(registry.stream_fn(model)(model, context(), options(api_key=key))))
    assert message.stop_reason == "toolUse", message.error_message
    sts, model_request = sse.requests
    form = dict(urllib.parse.parse_qsl(sts.body.decode()))
    assert form["subject_token"] == SUBJECT and form["audience"] == AUDIENCE
    assert model_request.headers["authorization"] == f"Bearer {TOKEN}"
    seen = ran(script)
    assert seen["argv"] == ["ok"]
    assert seen["env"] == {
        "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES": "1",
        "GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE": AUDIENCE,
        "GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE": "urn:ietf:params:oauth:token-type:jwt",
        "GOOGLE_EXTERNAL_ACCOUNT_ID": "",
        "GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE": "0",
        "GOOGLE_EXTERNAL_ACCOUNT_REVOKE": "0",
    }


async def test_without_the_allow_variable_nothing_runs(
    sse, script, isolated_environment, monkeypatch, tmp_path
):
    path = tmp_path / "wif.json"
    path.write_text(json.dumps({**info(script), "token_url": sse.url + "/sts"}))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj-exe")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    # a value other than "1", or the variable in auth.json's env only, allows nothing
    monkeypatch.setenv(adc_executable.ALLOW_VARIABLE, "true")
    agent = isolated_environment["agent"]
    (agent / "models.json").write_text(json.dumps({"providers": {"google-vertex": {"baseUrl": sse.url}}}))
    registry = ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=str(agent))).host)
    model = registry.find("google-vertex", "gemini-2.5-flash")
    scoped = options(api_key="<authenticated>", extra={"env": {adc_executable.ALLOW_VARIABLE: "1"}})
    events = await collect(registry.stream_fn(model)(model, context(), scoped))
    assert [e.type for e in events] == ["error"]
    assert "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1" in events[0].error.error_message
    assert ran(script) is None and sse.requests == []
    # a valid cached answer is not used either: the file names a program all the same
    cache = tmp_path / "cache.json"
    cache.write_text(json.dumps({"version": 1, "success": True, "token_type": "urn:ietf:params:oauth:token-type:jwt",
                                 "id_token": "cached", "expiration_time": time.time() + 600}))  # fmt: skip
    with pytest.raises(CredentialsError, match="ALLOW_EXECUTABLES"):
        subject(script, output_file=str(cache))


def test_output_file_cache_environment_and_token_types(script, monkeypatch, tmp_path):
    monkeypatch.setenv(adc_executable.ALLOW_VARIABLE, "1")
    cache = tmp_path / "cache.json"
    answer = {"version": 1, "success": True, "token_type": "urn:ietf:params:oauth:token-type:id_token",
              "id_token": "cached-subject", "expiration_time": int(time.time()) + 600}  # fmt: skip
    cache.write_text(json.dumps(answer))
    assert subject(script, output_file=str(cache)) == "cached-subject" and ran(script) is None
    # expired, unsuccessful or without an expiry: the command runs (and is told the file)
    for stale in (
        {**answer, "expiration_time": 5},
        {"version": 1, "success": False},
        {**answer, "expiration_time": None},
    ):
        cache.write_text(json.dumps({k: v for k, v in stale.items() if v is not None}))
        assert subject(script, output_file=str(cache)) == SUBJECT
        assert ran(script)["env"]["GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE"] == str(cache)
        (script.parent / "ran.json").unlink()
    # a command that prints nothing is read from the output file it wrote
    cache.unlink()
    assert subject(script, "file", output_file=str(cache)) == SUBJECT
    # a cached answer missing a required field is an error, as in google-auth
    cache.write_text(json.dumps({"success": True}))
    with pytest.raises(CredentialsError, match="version and success"):
        subject(script, output_file=str(cache))
    assert subject(script, "saml") == "PHNhbWw+"
    data = {**info(script), "service_account_impersonation_url": IMPERSONATION}
    adc_executable.executable_subject_token(data, data["credential_source"]["executable"], CredentialsError)
    env = ran(script)["env"]
    assert env["GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL"] == "sa@proj.iam.gserviceaccount.com"
    assert env["GOOGLE_EXTERNAL_ACCOUNT_ID"] == "sa@proj.iam.gserviceaccount.com"


def test_failures_are_one_line_each(script, monkeypatch):
    monkeypatch.setenv(adc_executable.ALLOW_VARIABLE, "1")
    with pytest.raises(CredentialsError, match="code 401, message caller not allowed"):
        subject(script, "refused")
    with pytest.raises(CredentialsError, match="already expired"):
        subject(script, "expired")
    with pytest.raises(CredentialsError, match="exited with code 3: cannot reach the identity provider"):
        subject(script, "crash")
    with pytest.raises(CredentialsError, match="printed nothing"):
        subject(script, "silent")
    with pytest.raises(CredentialsError, match="between 5000 and 120000"):
        subject(script, timeout_millis=1000)
    with pytest.raises(CredentialsError, match="could not run"):
        subject(script.with_name("missing-helper"))
    with pytest.raises(CredentialsError, match="without a command"):
        adc_executable.executable_subject_token(info(script), {"command": ""}, CredentialsError)
    # the timeout ends the program (the lower bound lowered so the test stays short)
    monkeypatch.setattr(adc_executable, "MIN_TIMEOUT_MS", 100)
    started = time.monotonic()
    with pytest.raises(CredentialsError, match="did not finish within 0.5 s"):
        subject(script, "sleep", timeout_millis=500)
    assert time.monotonic() - started < 10

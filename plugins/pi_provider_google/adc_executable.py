"""The subject token of an ``external_account`` credential whose ``credential_source`` is an
``executable`` (google-auth's "pluggable" credentials), run as google-auth runs it.

A credentials file naming a program is a way to make pi-host run that program, so nothing runs
unless the user has said so in the process environment: ``GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1``
(google-auth's own switch). It is read from ``os.environ`` only, never from ``auth.json``'s
``env``, which a shared file could set. Even a cached answer in ``output_file`` is used only then.

The command is split on whitespace (no shell) and run with a timeout (``timeout_millis``, 5 to
120 s, default 30 s), no stdin, stdout and stderr together, and google-auth's variables added to
the environment (``GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE``, ``..._TOKEN_TYPE``, ``..._INTERACTIVE=0``,
``..._ID``, ``..._REVOKE=0``, ``..._IMPERSONATED_EMAIL`` and ``..._OUTPUT_FILE`` when they apply).
It prints ``{"version": 1, "success": true, "token_type": ..., "id_token" | "saml_response": ...,
"expiration_time": <epoch s>}`` or ``{"success": false, "code", "message"}``. An ``output_file``
holding an unexpired successful answer with an ``expiration_time`` is used instead of running the
command; a command that prints nothing is read from that file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from typing import Any

from pi_provider_google.adc_http import Fail

ALLOW_VARIABLE = "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES"
MAX_VERSION = 1
DEFAULT_TIMEOUT_MS = 30_000
MIN_TIMEOUT_MS, MAX_TIMEOUT_MS = 5_000, 120_000
OIDC_TYPES = ("urn:ietf:params:oauth:token-type:jwt", "urn:ietf:params:oauth:token-type:id_token")
SAML_TYPE = "urn:ietf:params:oauth:token-type:saml2"
_EMAIL = re.compile(r"/serviceAccounts/([^/:]+):generateAccessToken")


class _Stale(Exception):
    """A cached answer that may not be used (unsuccessful, expired, without an expiry)."""


def impersonated_email(info: dict[str, Any]) -> str:
    match = _EMAIL.search(str(info.get("service_account_impersonation_url") or ""))
    return match.group(1) if match else ""


def _token(answer: Any, fail: Fail, cached: bool = False) -> str:
    """The subject token of the executable's answer. Answers missing a required field are errors
    (cached or not, as in google-auth); a cached answer that is merely stale raises ``_Stale``."""
    if not isinstance(answer, dict) or "version" not in answer or "success" not in answer:
        raise fail("The credentials executable's answer needs the version and success fields")
    if not isinstance(answer["version"], int) or answer["version"] > MAX_VERSION:
        raise fail(f"The credentials executable answered with unsupported version {answer['version']!r}")
    if not answer["success"]:
        if cached:
            raise _Stale
        if "code" not in answer or "message" not in answer:
            raise fail("The credentials executable failed without the code and message fields")
        raise fail(
            f"The credentials executable answered unsuccessfully: code {answer['code']}, "
            f"message {answer['message']}"
        )
    expiry = answer.get("expiration_time")
    if cached and expiry is None:
        raise _Stale  # google-auth treats a cached answer without an expiry as expired
    if isinstance(expiry, (int, float)) and expiry < time.time():
        if cached:
            raise _Stale
        raise fail("The token the credentials executable returned has already expired")
    kind = answer.get("token_type")
    if kind is None:
        raise fail("The credentials executable's answer has no token_type field")
    field = "id_token" if kind in OIDC_TYPES else "saml_response" if kind == SAML_TYPE else None
    if field is None:
        raise fail(f"The credentials executable returned an unsupported token type {kind!r}")
    token = answer.get(field)
    if not isinstance(token, str) or not token:
        raise fail(f"The credentials executable's answer has no {field}")
    return token


def _cached(path: str | None, fail: Fail) -> str | None:
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            answer = json.load(handle)
    except (OSError, ValueError):
        return None  # no usable cache yet: run the command
    try:
        return _token(answer, fail, cached=True)
    except _Stale:
        return None


def _timeout_s(spec: dict[str, Any], fail: Fail) -> float:
    millis = spec.get("timeout_millis") or DEFAULT_TIMEOUT_MS
    if not isinstance(millis, (int, float)) or not MIN_TIMEOUT_MS <= millis <= MAX_TIMEOUT_MS:
        raise fail("The credentials executable's timeout_millis must be between 5000 and 120000")
    return millis / 1000


def _environment(info: dict[str, Any], output_file: str | None) -> dict[str, str]:
    env = dict(os.environ)
    email = impersonated_email(info)
    env.update(
        {
            "GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE": str(info.get("audience", "")),
            "GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE": str(info.get("subject_token_type", "")),
            "GOOGLE_EXTERNAL_ACCOUNT_ID": email,
            "GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE": "0",  # pi-host never hands the terminal over
            "GOOGLE_EXTERNAL_ACCOUNT_REVOKE": "0",
        }
    )
    if info.get("service_account_impersonation_url"):
        env["GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL"] = email
    if output_file:
        env["GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE"] = output_file
    return env


def _last_line(output: bytes) -> str:
    # Enough to say why it failed; a long output is more likely to carry something secret.
    lines = output.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:200] if lines else "(no output)"


def executable_subject_token(info: dict[str, Any], spec: Any, fail: Fail) -> str:
    """The subject token from ``credential_source.executable`` (blocking: runs the command)."""
    if os.environ.get(ALLOW_VARIABLE) != "1":
        raise fail(
            "Google external_account credentials name a program to run for the subject token; "
            f"set {ALLOW_VARIABLE}=1 in the environment to allow it (as google-auth requires)"
        )
    if not isinstance(spec, dict) or not spec.get("command"):
        raise fail("Google external_account credentials name an executable without a command")
    timeout = _timeout_s(spec, fail)
    output_file = spec.get("output_file") or None
    token = _cached(output_file, fail)
    if token is not None:
        return token
    argv = str(spec["command"]).split()
    try:
        done = subprocess.run(  # noqa: S603 - allowed by the user above; no shell
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=_environment(info, output_file),
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise fail(f"The credentials executable {argv[0]} did not finish within {timeout:g} s") from None
    except OSError as exc:
        raise fail(f"The credentials executable {argv[0]} could not run: {exc.strerror or exc}") from None
    if done.returncode != 0:
        raise fail(
            f"The credentials executable {argv[0]} exited with code {done.returncode}: {_last_line(done.stdout)}"
        )
    if not done.stdout.strip() and not output_file:
        raise fail(f"The credentials executable {argv[0]} printed nothing")
    try:
        if done.stdout.strip():
            answer = json.loads(done.stdout)
        else:
            with open(str(output_file), encoding="utf-8") as handle:
                answer = json.load(handle)
    except (OSError, ValueError):
        raise fail(f"The credentials executable {argv[0]} did not answer with JSON") from None
    return _token(answer, fail)

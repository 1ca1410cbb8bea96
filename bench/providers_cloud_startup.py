"""`pi -p` with an Amazon Bedrock model configured against one with an OpenAI-style model, both
answered at once by a loopback server (Bedrock's in AWS event-stream framing), so the figures are
pi-host's own cost: start-up, the request, the answer. Issue 32's bar: Bedrock may be slower by
no more than the signing library's import (botocore), which only a SigV4-signed request loads.

    .venv/bin/python bench/providers_cloud_startup.py [--runs 9]

Prints the median wall time of each kind of run, the ratio, the difference, and the median time
of importing what signing loads (botocore.auth, botocore.credentials, botocore.awsrequest) in a
fresh interpreter. A Bedrock run with a bearer token (no botocore) is shown too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.providers import eventstream  # noqa: E402
from tests.support.providers.sse import Reply, SSEServer  # noqa: E402

OPENAI_TEXT = (REPO / "tests/fixtures/providers/openai/completions_text.sse").read_bytes()
SIGNING_IMPORT = (
    "import time; t = time.perf_counter(); import botocore.auth, botocore.credentials, botocore.awsrequest; "
    "print(time.perf_counter() - t)"
)


def bedrock_answer() -> bytes:
    return b"".join(
        [
            eventstream.event("messageStart", {"role": "assistant"}),
            eventstream.event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "ok"}}),
            eventstream.event("contentBlockStop", {"contentBlockIndex": 0}),
            eventstream.event("messageStop", {"stopReason": "end_turn"}),
            eventstream.event(
                "metadata", {"usage": {"inputTokens": 10, "outputTokens": 1, "totalTokens": 11}}
            ),
        ]
    )


def run_once(env: dict[str, str], model: str, cwd: str) -> float:
    command = [sys.executable, "-m", "pi_host", "--no-session", "--model", model, "-p", "hi"]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{model} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    openai_server, bedrock_server = SSEServer().start(), SSEServer().start()
    openai_server.default = Reply.sse(OPENAI_TEXT)
    bedrock_server.default = Reply(
        headers={"content-type": "application/vnd.amazon.eventstream"}, parts=[bedrock_answer()]
    )
    try:
        with tempfile.TemporaryDirectory() as root:
            agent, home = Path(root, "agent"), Path(root, "home")
            agent.mkdir()
            home.mkdir()
            providers = {
                "openai-loop": {
                    "baseUrl": openai_server.url + "/v1",
                    "api": "openai-completions",
                    "apiKey": "sk-bench-key",
                    "models": [{"id": "gpt-loop"}],
                },
                "amazon-bedrock": {"baseUrl": bedrock_server.url},
            }
            (agent / "models.json").write_text(json.dumps({"providers": providers}))
            base = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "OPENAI_"))}
            base.update(
                {"PI_CODING_AGENT_DIR": str(agent), "HOME": str(home), "AWS_EC2_METADATA_DISABLED": "true"}
            )
            signed = {
                **base,
                "AWS_ACCESS_KEY_ID": "AKIDBENCH",
                "AWS_SECRET_ACCESS_KEY": "bench-secret-key-0123",
            }
            signed["AWS_REGION"] = "us-east-1"
            bearer = {**base, "AWS_BEARER_TOKEN_BEDROCK": "bench-bearer-token-0123"}
            kinds = {
                "openai": (base, "openai-loop/gpt-loop"),
                "bedrock (SigV4)": (signed, "amazon-bedrock/us.anthropic.claude-opus-5-5"),
                "bedrock (bearer)": (bearer, "amazon-bedrock/us.anthropic.claude-opus-5-5"),
            }
            times: dict[str, list[float]] = {name: [] for name in kinds}
            for env, model in kinds.values():
                run_once(env, model, root)  # warm the byte-code caches
            for _ in range(args.runs):  # interleaved, so drift in machine load hits every kind alike
                for name, (env, model) in kinds.items():
                    times[name].append(run_once(env, model, root))
            imports = []
            for _ in range(args.runs):
                out = subprocess.run([sys.executable, "-c", SIGNING_IMPORT], capture_output=True, text=True)
                imports.append(float(out.stdout.strip()))
    finally:
        openai_server.stop()
        bedrock_server.stop()
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, value in medians.items():
        print(f"{name:18} median {value * 1000:7.1f} ms over {args.runs} runs")
    signing = statistics.median(imports)
    extra = medians["bedrock (SigV4)"] - medians["openai"]
    print(f"bedrock (SigV4) / openai = {medians['bedrock (SigV4)'] / medians['openai']:.3f}")
    print(f"bedrock (bearer) / openai = {medians['bedrock (bearer)'] / medians['openai']:.3f}")
    print(f"difference {extra * 1000:.1f} ms; botocore signing import {signing * 1000:.1f} ms (median)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

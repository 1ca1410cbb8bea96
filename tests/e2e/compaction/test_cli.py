"""The must-show run: JSON mode, faux-small, built-in ``read``; automatic compaction happens
between tool turns, the compaction entry lands in the session file, and the run finishes."""

from __future__ import annotations

import glob
import json

from tests.support.pi import run_pi

SUMMARY = "## Goal\nRead the four notes files.\n\n## Progress\n### Done\n- [x] Read notes1.txt to notes3.txt"
SCRIPT = [
    *[{"toolCalls": [{"name": "read", "arguments": {"path": f"notes{i}.txt"}}]} for i in range(1, 5)],
    {"text": SUMMARY},  # the summary request comes after the fourth tool turn
    {"text": "All four notes files are read."},
]
SETTINGS = {
    "compaction": {"modelOverrides": {"faux/faux-small": {"reserveTokens": 2000, "keepRecentTokens": 1500}}}
}


def test_json_mode_run_compacts_between_tool_turns(isolated_environment, tmp_path):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    (agent / "settings.json").write_text(json.dumps(SETTINGS))
    for i in range(1, 5):
        lines = [f"line {n}: the quick brown fox jumps over the lazy dog in notes{i}" for n in range(90)]
        (work / f"notes{i}.txt").write_text("\n".join(lines) + "\n")
    out = run_pi(
        "--mode",
        "json",
        "--model",
        "faux/faux-small",
        "Read the four notes files",
        cwd=work,
        script=SCRIPT,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    kinds = [r["type"] for r in records if r["type"] != "message_update"]
    start = kinds.index("compaction_start")
    assert (
        kinds[start - 1] == "turn_end"
        and kinds[start + 1] == "compaction_end"
        and kinds[start + 2] == "turn_start"
    )
    assert kinds.count("tool_execution_end") == 4 and kinds.index("tool_execution_end") < start
    end = next(r for r in records if r["type"] == "compaction_end")
    assert end["reason"] == "threshold" and end["aborted"] is False and end["willRetry"] is False
    result = end["result"]
    assert (
        SUMMARY in result["summary"]
        and "<read-files>\nnotes1.txt\nnotes2.txt\nnotes3.txt\n</read-files>" in result["summary"]
    )
    assert result["tokensBefore"] > 6000 > result["estimatedTokensAfter"]
    assert kinds[-2:] == ["agent_end", "agent_settled"]
    final = [r for r in records if r["type"] == "message_end" and r["message"]["role"] == "assistant"][-1]
    assert final["message"]["content"][0]["text"] == "All four notes files are read."
    [path] = glob.glob(str(agent / "sessions" / "*" / "*.jsonl"))
    with open(path, encoding="utf-8") as handle:
        entries = [json.loads(line) for line in handle]
    [compaction] = [e for e in entries if e["type"] == "compaction"]
    assert compaction["firstKeptEntryId"] == result["firstKeptEntryId"]
    assert compaction["summary"] == result["summary"]
    assert compaction["details"] == {
        "readFiles": ["notes1.txt", "notes2.txt", "notes3.txt"],
        "modifiedFiles": [],
    }
    ids = [e.get("id") for e in entries]
    kept = entries[ids.index(compaction["firstKeptEntryId"])]
    assert kept["message"]["role"] == "assistant"  # a split turn: never cut at a tool result
    assert entries[-1]["message"]["content"][0]["text"] == "All four notes files are read."

"""Run inside a Python >= 3.12 environment that has ``harbor``: Harbor's stock pi agent
(``harbor.agents.installed.pi.Pi``) builds its command line, which is run here with bash (the
``pi`` first on PATH is the program under test), then Harbor converts the session file to an ATIF
trajectory with its own code and checks it with its own validator. Prints one JSON object:
``{command, exit_code, output, valid, errors, steps}``.

Usage: python run_harbor_pi.py <logs dir> <model provider/id> <instruction>
"""

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

from harbor.agents.installed.pi import Pi
from harbor.models.agent.context import AgentContext
from harbor.utils.trajectory_validator import TrajectoryValidator


class CommandLine(Pi):
    """Harbor's agent with its container calls kept instead of run."""

    commands: list[str] = []

    async def exec_as_agent(self, environment, command, env=None, cwd=None, timeout_sec=None):
        self.commands.append(command)

        class Done:
            stdout = ""
            return_code = 0

        return Done()


def main() -> int:
    logs, model, instruction = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    agent = CommandLine(logs_dir=logs, model_name=model)
    asyncio.run(agent.run(instruction, None, AgentContext()))
    command = next(c for c in agent.commands if " --print --mode json " in c)
    # the container's log mount is this directory; no nvm here (pi is on PATH)
    local = command.replace(str(agent.environment_logs_dir), str(logs))
    local = re.sub(r"^\. ~/\.nvm/nvm\.sh; ", "", local)
    done = subprocess.run(["bash", "-c", local], capture_output=True, text=True, timeout=120)
    context = AgentContext()
    agent.populate_context_post_run(context)
    trajectory_path = logs / "trajectory.json"
    validator = TrajectoryValidator()
    valid = trajectory_path.is_file() and validator.validate(trajectory_path)
    trajectory = json.loads(trajectory_path.read_text()) if trajectory_path.is_file() else {}
    steps = [
        {
            "source": s.get("source"),
            "message": s.get("message"),
            "tool_calls": [c.get("function_name") for c in s.get("tool_calls") or []],
            "observations": len((s.get("observation") or {}).get("results") or []),
        }
        for s in trajectory.get("steps") or []
    ]
    print(
        json.dumps(
            {
                "command": command,
                "exit_code": done.returncode,
                "output": (done.stdout + done.stderr)[-3000:],
                "valid": bool(valid),
                "errors": list(validator.errors),
                "steps": steps,
                "output_tokens": context.n_output_tokens,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

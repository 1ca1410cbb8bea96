"""The cause of a failed pip (or uv) run, in one line, from its captured output.

pip's last line is rarely the cause: a build that fails ends in ``hint: See above for details.``,
a crash in ``ERROR: Exception:`` and a traceback, a failed ``git clone`` in a note. So the cause
is looked for where each kind of failure puts it, in this order:

1. a subprocess that "did not run successfully" (building metadata or a wheel, ``git clone``):
   the error its own output ends in (an exception line, ``error:``, ``fatal:``, a compiler error);
2. pip crashed (``ERROR: Exception:``): the last line of the traceback;
3. pip's ``ERROR:`` lines: the last one (its conclusion), with the ``Hint:`` after it, or for a
   dependency conflict the packages that conflict;
4. a diagnostic (pip's ``× ...`` / ``╰─> ...``, uv's ``× ... ╰─▶``) or uv's ``error:`` lines;
5. else the last line that is not boilerplate.
"""

from __future__ import annotations

import re

MAX_CHARS = 500
_STEP = re.compile(r"^\s*× (.+?) did not run successfully\.?$")
_EXCEPTION = re.compile(r"^(?:[A-Za-z_]\w*\.)*([A-Z]\w*(?:Error|Exception|Exit|Interrupt)(?::.*)?)$")
_TOOL_ERROR = re.compile(r"^(?:error|fatal|ERROR|FATAL):\s*\S")
_COMPILER = re.compile(r":\d+(?::\d+)?: (?:fatal )?error: ")
_PIP_CODE = re.compile(r"^error: [a-z]+(?:-[a-z]+)+$")  # pip's reference: subprocess-exited-with-error
_BOILERPLATE = ("note:", "hint:", "╰─>", "╰─▶", "│", "[end of output]", "Looking in ")


def failure_cause(output: str) -> str:
    """One line saying why pip failed, taken from ``output`` (stdout and stderr together)."""
    lines = [line.rstrip() for line in output.splitlines()]
    for find in (_subprocess_failure, _crash, _pip_errors, _diagnostics, _last_line):
        cause = find(lines)
        if cause:
            return cause if len(cause) <= MAX_CHARS else cause[: MAX_CHARS - 1] + "…"
    return "pip failed without output"


def _subprocess_failure(lines: list[str]) -> str | None:
    for index, line in enumerate(lines):
        match = _STEP.match(line)
        if not match:
            continue
        step = match.group(1)
        if step.startswith("git "):  # the command line names a temporary folder: just the verb
            step = " ".join(step.split()[:2])
        block = _output_block(lines, index) or _streamed_output(lines, index)
        cause = _cause_in(block)
        return f"{step} did not run successfully: {cause}" if cause else f"{step} did not run successfully"
    return None


def _output_block(lines: list[str], start: int) -> list[str]:
    """The captured output pip shows under a step: ``╰─> [N lines of output]`` to ``[end of output]``."""
    for index in range(start + 1, min(start + 4, len(lines))):
        if "lines of output]" in lines[index]:
            block = []
            for line in lines[index + 1 :]:
                if line.strip() == "[end of output]":
                    break
                block.append(line.strip())
            return block
    return []


def _streamed_output(lines: list[str], start: int) -> list[str]:
    """``╰─> See above for output.``: the subprocess wrote straight through (``git clone``); its
    lines are those after pip's last ``Running command`` before the failure."""
    end = start
    while end > 0 and "subprocess-exited-with-error" not in lines[end]:
        end -= 1
    begin = end
    while begin > 0 and "Running command" not in lines[begin - 1]:
        begin -= 1
    return [line.strip() for line in lines[begin:end]]


def _cause_in(block: list[str]) -> str | None:
    """The error a subprocess's output ends in: a compiler's first error, the exception a
    traceback ends in, the first of the ``fatal:`` lines git ends with, or the last ``error:``."""
    compiler = [line for line in block if _COMPILER.search(line)]
    if compiler:
        return compiler[0]
    exceptions = [m.group(1) for line in block if (m := _EXCEPTION.match(line))]
    if exceptions:
        return exceptions[-1]
    fatal = [line for line in block if line.startswith("fatal:")]
    if fatal:
        return fatal[0]
    errors = [line for line in block if _TOOL_ERROR.match(line)]
    if errors:
        return errors[-1]
    rest = [line for line in block if line]
    return rest[-1] if rest else None


def _crash(lines: list[str]) -> str | None:
    if "ERROR: Exception:" not in lines:
        return None
    after = lines[lines.index("ERROR: Exception:") + 1 :]
    exceptions = [m.group(1) for line in after if (m := _EXCEPTION.match(line.strip()))]
    rest = [line.strip() for line in after if line.strip()]
    return exceptions[-1] if exceptions else (rest[-1] if rest else None)


def _pip_errors(lines: list[str]) -> str | None:
    errors = [i for i, line in enumerate(lines) if line.startswith("ERROR:")]
    if not errors:
        return None
    last = lines[errors[-1]].removeprefix("ERROR:").strip()
    if last.startswith("ResolutionImpossible"):
        conflict = _conflict(lines, errors)
        if conflict:
            return conflict
    following = lines[errors[-1] + 1] if errors[-1] + 1 < len(lines) else ""
    if following.startswith("Hint: "):  # pip: "It looks like a path. File '...' does not exist."
        last += f" ({following.removeprefix('Hint: ').strip()})"
    return last


def _conflict(lines: list[str], errors: list[int]) -> str | None:
    """``Cannot install a and b because ... conflicting dependencies: a depends on c==1; ...``."""
    cannot = [lines[i].removeprefix("ERROR:").strip() for i in errors if "Cannot install" in lines[i]]
    if not cannot:
        return None
    causes: list[str] = []
    if "The conflict is caused by:" in lines:
        for line in lines[lines.index("The conflict is caused by:") + 1 :]:
            if not line.startswith(" "):
                break
            causes.append(line.strip())
    head = cannot[0].rstrip(".")
    return f"{head}: {'; '.join(causes)}" if causes else head


def _diagnostics(lines: list[str]) -> str | None:
    for index, line in enumerate(lines):
        text = line.strip()
        if text.startswith("× "):  # "× No solution found ...:" then "╰─▶ Because ..." (uv)
            head = text.removeprefix("× ").rstrip(":")
            detail = _first_paragraph(lines[index + 1 :])
            return f"{head}: {detail}" if detail else head
    errors = [i for i, line in enumerate(lines) if line.startswith("error:") and not _PIP_CODE.match(line)]
    if not errors:
        return None
    last = errors[-1]
    caused = [line.strip() for line in lines[last + 1 :] if line.strip().startswith("Caused by:")]
    return "; ".join([lines[last].removeprefix("error:").strip()] + caused)


def _first_paragraph(lines: list[str]) -> str:
    """The text after a ``×`` line: its ``╰─>`` / ``╰─▶`` line and the lines continuing it."""
    words: list[str] = []
    for line in lines:
        if line.strip().startswith("│"):  # "│ exit code: 1"
            continue
        text = re.sub(r"^╰─[>▶]\s*", "", line.strip())
        if not text or text.startswith("See above"):
            break
        words.append(text)
    return " ".join(words)


def _last_line(lines: list[str]) -> str | None:
    meaningful = [line.strip() for line in lines if line.strip()]
    meaningful = [line for line in meaningful if not line.startswith(_BOILERPLATE)]
    return meaningful[-1] if meaningful else None

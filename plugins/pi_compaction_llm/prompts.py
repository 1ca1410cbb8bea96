"""The words sent to the summarizing model. pi-host's own wording; the structure follows pi
(reference §7.4, §7.9) so summaries read the same across the two."""

SYSTEM_PROMPT = (
    "You condense coding-agent conversations into structured hand-over notes. Another assistant "
    "will continue the work from your notes alone, without seeing the conversation. Reply with the "
    "notes in the requested format and nothing else: do not answer questions from the conversation, "
    "do not carry on with the task and do not call tools."
)

_SECTIONS = """## Goal
[What the user is trying to achieve. Several goals become a short list.]

## Constraints & Preferences
- [Requirements, conventions and preferences the user stated, or "(none)"]

## Progress
### Done
- [x] [Finished work, with the files it touched]

### In Progress
- [ ] [Work that was started and not finished]

### Blocked
- [Problems that stop progress, or "(none)"]

## Key Decisions
- **[Decision]**: [why it was made]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Facts needed to continue: exact paths, identifiers, commands, error messages, data]"""

INITIAL_INSTRUCTIONS = (
    "Write hand-over notes for the conversation above, using exactly this structure:\n\n"
    + _SECTIONS
    + "\n\nBe brief. Keep exact file paths, function names, commands and error messages."
)

UPDATE_INSTRUCTIONS = (
    "The conversation above continues the work described in <previous-summary>. Rewrite the notes "
    "so they cover both. Keep everything from the previous notes that is still true, add the new "
    "progress, move items that are now finished to Done, record new decisions, and rewrite Next "
    "Steps for the current state. Use exactly this structure:\n\n"
    + _SECTIONS
    + "\n\nBe brief. Keep exact file paths, function names, commands and error messages."
)

TURN_PREFIX_INSTRUCTIONS = """The conversation above is the beginning of a single turn; the rest of that turn is kept word for word after your notes. Write what a reader needs to understand the kept part:

## Original Request
[What the user asked for in this turn]

## Progress So Far
- [What was already done or found in this part of the turn]

## Context Needed to Continue
- [Files, values, outputs and decisions the kept part relies on]

Be brief."""

BRANCH_INSTRUCTIONS = (
    "The conversation above is a branch the user explored and then left to continue elsewhere. "
    "Write notes that let the work go on without it, using exactly this structure:\n\n"
    "## Goal\n[What this branch was trying to achieve]\n\n"
    '## Constraints & Preferences\n- [Requirements and preferences stated, or "(none)"]\n\n'
    "## Progress\n### Done\n- [x] [Finished work]\n\n### In Progress\n- [ ] [Unfinished work]\n\n"
    '### Blocked\n- [Problems, or "(none)"]\n\n'
    "## Key Decisions\n- **[Decision]**: [why]\n\n"
    "## Next Steps\n1. [What would come next on that branch]\n\n"
    "Be brief. Keep exact file paths, commands and error messages."
)

BRANCH_PREAMBLE = (
    "The user explored another branch of this conversation and came back.\n"
    "What happened on that branch, in summary:\n\n"
)

NO_PRIOR_HISTORY = "(No earlier history: the conversation started with the turn summarized below.)"

SPLIT_TURN_HEADING = "**Turn context (split turn):**"


def focus(instructions: str | None) -> str:
    """The paragraph that carries ``/compact <focus>`` text."""
    if not instructions or not instructions.strip():
        return ""
    return f"\n\nAdditional focus: {instructions.strip()}"

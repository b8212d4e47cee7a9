"""LLM-as-judge runner over the `openai` client (Responses API or Chat Completions).

from annotator.judge import JudgeConfig, JudgeRequest, run_judge
summary = run_judge(requests, rubric, JudgeConfig(model="gpt-5-mini"), sink)
if summary.n_unscored: ...  # a second run picks up exactly those items
"""

from .pairs import JudgePairVote, PairRequest, run_pair_judge
from .prompt import prompt_hash, system_prompt, user_parts
from .runner import (
    ERROR_KINDS,
    JudgeConfig,
    JudgeError,
    JudgeRequest,
    JudgeScore,
    JudgeSink,
    RunSummary,
    make_client,
    run_judge,
)
from .schema import JudgeReply, ReplyError, judge_schema, validate_reply
from .versions import judge_version, parse_judge_ref

__all__ = [
    "ERROR_KINDS",
    "JudgeConfig",
    "JudgeError",
    "JudgePairVote",
    "JudgeReply",
    "JudgeRequest",
    "JudgeScore",
    "JudgeSink",
    "PairRequest",
    "ReplyError",
    "RunSummary",
    "judge_schema",
    "judge_version",
    "make_client",
    "parse_judge_ref",
    "prompt_hash",
    "run_judge",
    "run_pair_judge",
    "system_prompt",
    "user_parts",
    "validate_reply",
]

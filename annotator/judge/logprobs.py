"""The judge's probability of each answer from the token logprobs of its reply.

The reply is one JSON object; an answer's probability is the product of the
probabilities of the tokens that wrote its value (the sum of their logprobs,
exponentiated): the probability the model gave to writing exactly this answer
once it had reached the field. Tokens are matched to the reply by character
offsets, so a token that straddles the value and the punctuation around it
counts (its probability is that of the whole token). Where the tokens do not
spell the reply (a server that rewrote it), nothing is claimed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence

Token = tuple[str, float]  # (token text, natural-log probability)


def value_spans(text: str) -> dict[str, tuple[int, int]]:
    """Character span of each top-level value of the JSON object in `text`, by key."""
    dec = json.JSONDecoder()
    i = text.find("{")
    if i < 0:
        return {}
    spans: dict[str, tuple[int, int]] = {}
    n = len(text)

    def skip(j: int) -> int:
        while j < n and text[j] in " \t\r\n":
            j += 1
        return j

    i = skip(i + 1)
    while i < n and text[i] != "}":
        try:
            key, i = dec.raw_decode(text, i)
            i = skip(i)
            if i >= n or text[i] != ":":
                return spans
            start = skip(i + 1)
            _value, end = dec.raw_decode(text, start)
        except ValueError:
            return spans
        spans[str(key)] = (start, end)
        i = skip(end)
        if i < n and text[i] == ",":
            i = skip(i + 1)
    return spans


def answer_probabilities(
    text: str, tokens: Sequence[Token] | None, keys: Iterable[str]
) -> dict[str, float]:
    """{key: probability of the value written for key} for the keys found; {} when the tokens
    are missing or do not spell `text`."""
    if not tokens or "".join(t for t, _ in tokens) != text:
        return {}
    spans = value_spans(text)
    starts, pos = [], 0
    for tok, _ in tokens:
        starts.append(pos)
        pos += len(tok)
    out: dict[str, float] = {}
    for key in keys:
        span = spans.get(key)
        if span is None:
            continue
        lo, hi = span
        total = sum(
            lp for (tok, lp), s in zip(tokens, starts, strict=True) if s < hi and s + len(tok) > lo
        )
        out[key] = float(min(1.0, math.exp(total)))
    return out

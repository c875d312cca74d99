"""`rewrite_query`: a natural-language question turned into the words worth searching for.

OpenAI rewrites with a model; we rewrite without one, deterministically: the question's words, lowercased, without
punctuation, English function words and the phrasing of a request ("what is", "can you tell me about", "please").
What is left is what both rankers can use: the keyword ranker no longer weighs "what" or "the", and the query
vector is not pulled towards every chunk that asks a question. The rewritten queries are what the search reports
in `search_query`. A query with nothing left (only function words) is kept as it was."""

from __future__ import annotations

import re

# Function words and request phrasing: no chunk is found *because* it contains one of these.
_DROPPED = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both but
by can could did do does doing down during each few for from further had has have having he her here hers herself
him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or
other our ours ourselves out over own same she should so some such than that the their theirs them themselves then
there these they this those through to too under until up very was we were what when where which while who whom
why will with would you your yours yourself yourselves
please tell show give find explain describe know want need let lets us mean means anything something someone
thing things way ways get got also really
""".split())
_WORD = re.compile(r"[\w][\w'’.-]*[\w]|[\w]")


def rewritten(query: str) -> str:
    """The query's content words in their order, without repeats; the query itself when none is left."""
    kept: list[str] = []
    for match in _WORD.finditer(query.lower()):
        word = match.group().replace("’", "'")
        base = word.split("'")[0]  # "what's" -> "what", "policy's" -> "policy"
        if base in _DROPPED or word in _DROPPED or word in kept:
            continue
        kept.append(word if base == word else base)
    return " ".join(kept) if kept else query.strip()


def rewritten_queries(queries: list[str]) -> list[str]:
    return list(dict.fromkeys(rewritten(query) for query in queries))

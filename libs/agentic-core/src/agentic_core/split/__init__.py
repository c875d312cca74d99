"""Split execution (llm-d): what can be split, the signed context's claims, strict checks of a relayed model response.

Pure functions only; the llm-d service signs, stores and serves around them.
"""

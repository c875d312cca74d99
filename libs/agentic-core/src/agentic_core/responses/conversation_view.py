"""What a turn adds to a conversation: the client's items and the model's, in one order both views keep.

Listings show `both` and `public` items (a web search as `web_search_call`); the model's history reads
`both` and `model` items (the same search as its function call and output). Model-only rows of a
gateway call name the public item they stand behind, so deleting that item removes them too.
"""

from __future__ import annotations

from typing import Any

Row = tuple[dict[str, Any], str, str]  # (item, visibility, linked public item id)


def conversation_rows(
    input_items: list[dict[str, Any]],
    public_output: list[dict[str, Any]],
    continuation: list[dict[str, Any]],
    public_of_call: dict[str, str],
) -> list[Row]:
    """`public_of_call`: call id → id of the public item shown for that gateway call."""
    model_ids = {item["id"] for item in continuation}
    public_ids = {item["id"] for item in public_output}
    rows: list[Row] = [(item, "both", "") for item in input_items]
    shown = iter(public_output)

    def public_only_until(item_id: str | None) -> None:
        for item in shown:
            if item["id"] == item_id:
                return
            if item["id"] not in model_ids:
                rows.append((item, "public", ""))

    for item in continuation:
        if item["id"] in public_ids:
            public_only_until(item["id"])
            rows.append((item, "both", ""))
        else:
            rows.append((item, "model", public_of_call.get(item.get("call_id", ""), "")))
    public_only_until(None)
    return rows

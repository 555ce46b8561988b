"""The `recall_search` tool as an agent sees it: name, description and input schema (cosh's `Recall`).

The description is a fixed default text, optionally followed by a blank line and a suffix that lists the
active databases. The texts here are a contract with cosh and must not drift.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

TOOL_NAME = "recall_search"

DEFAULT_DESCRIPTION = (
    "Search an active knowledge base for entries semantically similar to your query. "
    "Returns matching entries with their IDs and content. "
    "Read-only \u2014 never writes to the database. "
    "Use this to retrieve relevant context from stored knowledge. "
    "Only the database name and query text are needed."
)

_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "db_name": {
            "type": "string",
            "description": (
                "Name of the active database to search "
                "(e.g. one listed in the session's knowledge-base context, if provided)"
            ),
        },
        "query": {"type": "string", "description": "The search query text"},
        "limit": {
            "type": "integer",
            "description": "Maximum number of results to return (default: 5)",
            "default": 5,
        },
    },
    "required": ["db_name", "query"],
}


def input_schema() -> dict[str, Any]:
    """A fresh copy of the tool's JSON schema (callers may mutate their copy)."""
    return copy.deepcopy(_INPUT_SCHEMA)


def compose_description(suffix: str) -> str:
    """The default description, then a blank line and the suffix; an empty suffix adds nothing."""
    return DEFAULT_DESCRIPTION if not suffix else f"{DEFAULT_DESCRIPTION}\n\n{suffix}"


@dataclass
class Recall:
    """The tool object: what an MCP `tools/list` returns for recall_search."""

    description: str = DEFAULT_DESCRIPTION
    name: str = field(default=TOOL_NAME, init=False)

    def with_description(self, suffix: str) -> Recall:
        """A new tool whose description is the default plus ``suffix``."""
        return Recall(compose_description(suffix))

    def rebuild_description(self, suffix: str) -> None:
        """Replace any earlier suffix in place; an empty suffix restores the default."""
        self.description = compose_description(suffix)

    def input_schema(self) -> dict[str, Any]:
        return input_schema()

    def to_mcp(self) -> dict[str, Any]:
        """The MCP tool object, with the protocol's camelCase key."""
        return {"name": self.name, "description": self.description, "inputSchema": self.input_schema()}

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_mcp(), ensure_ascii=False, indent=indent)

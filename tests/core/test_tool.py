"""The recall_search tool object: the seed's tests, ported as behaviours."""

from __future__ import annotations

import json

from recall_gui.core.base.tool import DEFAULT_DESCRIPTION, Recall

EXPECTED_TOOL = json.loads(
    r"""
{"name": "recall_search",
 "description": "Search an active knowledge base for entries semantically similar to your query. Returns matching entries with their IDs and content. Read-only \u2014 never writes to the database. Use this to retrieve relevant context from stored knowledge. Only the database name and query text are needed.",
 "inputSchema": {"type": "object",
   "properties": {
     "db_name": {"type": "string", "description": "Name of the active database to search (e.g. one listed in the session's knowledge-base context, if provided)"},
     "query": {"type": "string", "description": "The search query text"},
     "limit": {"type": "integer", "description": "Maximum number of results to return (default: 5)", "default": 5}},
   "required": ["db_name", "query"]}}
"""  # noqa: E501
)


def test_default_tool_is_exactly_the_seed_object() -> None:
    assert Recall().to_mcp() == EXPECTED_TOOL


def test_name_is_recall_search() -> None:
    assert Recall().name == "recall_search"


def test_schema_is_an_object() -> None:
    assert Recall().input_schema()["type"] == "object"


def test_required_holds_db_name_and_query_only() -> None:
    required = Recall().input_schema()["required"]
    assert set(required) == {"db_name", "query"}
    for internal in ("db_uri", "table_name", "vector_dim", "query_vector"):
        assert internal not in required
        assert internal not in Recall().input_schema()["properties"]


def test_limit_is_optional_with_default_5() -> None:
    schema = Recall().input_schema()
    assert "limit" not in schema["required"]
    assert schema["properties"]["limit"]["default"] == 5
    assert schema["properties"]["limit"]["type"] == "integer"


def test_a_new_tool_is_recall_search_with_cosh_s_default_text() -> None:
    tool = Recall()
    assert tool.name == "recall_search"
    assert tool.description == (
        "Search an active knowledge base for entries semantically similar to your query. "
        "Returns matching entries with their IDs and content. "
        "Read-only \u2014 never writes to the database. "
        "Use this to retrieve relevant context from stored knowledge. "
        "Only the database name and query text are needed."
    )
    assert tool.description == DEFAULT_DESCRIPTION


def test_with_description_appends_suffix_after_default() -> None:
    tool = Recall().with_description("Available databases:\n\n- Name: docs\n")
    assert tool.description == DEFAULT_DESCRIPTION + "\n\nAvailable databases:\n\n- Name: docs\n"


def test_with_description_returns_a_new_object() -> None:
    original = Recall()
    changed = original.with_description("x")
    assert original.description == DEFAULT_DESCRIPTION
    assert changed is not original


def test_with_description_empty_suffix_is_noop() -> None:
    assert Recall().with_description("") == Recall()


def test_rebuild_description_replaces_an_earlier_suffix() -> None:
    tool = Recall()
    tool.rebuild_description("first")
    tool.rebuild_description("second")
    assert tool.description == DEFAULT_DESCRIPTION + "\n\nsecond"


def test_rebuild_description_empty_restores_default() -> None:
    tool = Recall().with_description("something")
    tool.rebuild_description("")
    assert tool.description == DEFAULT_DESCRIPTION


def test_name_and_schema_survive_a_suffix() -> None:
    tool = Recall().with_description("suffix")
    assert tool.name == "recall_search"
    assert tool.input_schema() == Recall().input_schema()


def test_description_contains_the_em_dash() -> None:
    assert "Read-only \u2014 never writes" in DEFAULT_DESCRIPTION


def test_schema_copies_are_independent() -> None:
    schema = Recall().input_schema()
    schema["required"].append("db_uri")
    assert Recall().input_schema()["required"] == ["db_name", "query"]

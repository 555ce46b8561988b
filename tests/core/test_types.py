"""Search input and output types: JSON shapes are a contract with agents."""

from __future__ import annotations

import json

import pytest

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.base.types import RecallEntry, RecallOutput, RecallSearchInput, SearchHit, SearchResult
from tests.kbtools import KnowledgeBase


def test_input_round_trips_through_json_with_all_six_fields() -> None:
    original = RecallSearchInput("/data/db", "notes", 3, "what?", [0.5, -1.0, 2.0], 7)
    data = json.loads(original.to_json())
    assert set(data) == {"db_uri", "table_name", "vector_dim", "query", "query_vector", "limit"}
    assert RecallSearchInput.from_json(original.to_json()) == original


def test_missing_limit_means_five() -> None:
    text = json.dumps(
        {"db_uri": "d", "table_name": "t", "vector_dim": 2, "query": "q", "query_vector": [1, 2]}
    )
    parsed = RecallSearchInput.from_json(text)
    assert parsed.limit is None
    assert parsed.effective_limit == 5


def test_explicit_limit_is_kept() -> None:
    assert RecallSearchInput("d", "t", 1, "q", [1.0], 0).effective_limit == 0


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"vector_dim": "3"}, "'vector_dim' must be of type int"),
        ({"query_vector": "abc"}, "'query_vector' must be a list of numbers"),
        ({"limit": 2.5}, "'limit' must be a non-negative integer or null"),
        ({"limit": -1}, "'limit' must be a non-negative integer or null"),
        ({"query": None}, "'query' must be of type str"),
    ],
)
def test_input_with_wrong_types_is_refused_clearly(patch: dict[str, object], message: str) -> None:
    data = {"db_uri": "d", "table_name": "t", "vector_dim": 1, "query": "q", "query_vector": [1.0], **patch}
    with pytest.raises(InvalidInputError, match=message):
        RecallSearchInput.from_dict(data)


def test_input_missing_a_field_names_it() -> None:
    with pytest.raises(InvalidInputError, match="missing 'table_name'"):
        RecallSearchInput.from_dict({"db_uri": "d"})


def test_output_json_is_exactly_query_and_results() -> None:
    output = RecallOutput("how?", (RecallEntry("a", "first"), RecallEntry("b", "second")))
    assert json.loads(output.to_json()) == {
        "query": "how?",
        "results": [{"id": "a", "content": "first"}, {"id": "b", "content": "second"}],
    }
    assert (
        output.to_json()
        == '{"query":"how?","results":[{"id":"a","content":"first"},{"id":"b","content":"second"}]}'
    )


def test_output_keeps_non_ascii_text_verbatim() -> None:
    output = RecallOutput("café ☕", (RecallEntry("ш", "emoji 🚀"),))
    assert "café ☕" in output.to_json()
    assert RecallOutput.from_json(output.to_json()) == output


def test_search_result_converts_to_output_in_order_without_scores() -> None:
    hits = (SearchHit("near", "n", 0.1), SearchHit("far", "f", 0.9))
    result = SearchResult("q", hits, "l2", "flat", 1.0)
    output = result.to_output()
    assert [entry.id for entry in output.results] == ["near", "far"]
    assert "distance" not in output.to_json()


def test_vector_norm_is_the_euclidean_length_and_none_without_a_vector() -> None:
    assert SearchHit("a", "x", 0.0, vector=(3.0, 4.0)).vector_norm == pytest.approx(5.0)
    assert SearchHit("a", "x", 0.0).vector_norm is None


def test_the_norm_of_a_numpy_row_is_computed_in_double_precision() -> None:
    import numpy as np

    row = np.array([3e-3, 4e-3] + [1e-4] * 382, dtype=np.float32)
    expected = float(np.sqrt(np.sum(row.astype(np.float64) ** 2)))
    assert SearchHit("a", "x", 0.0, vector=row).vector_norm == pytest.approx(expected, rel=1e-12)
    assert SearchHit("a", "x", 0.0, vector=np.array([3.0, 4.0], np.float32)).vector_norm == 5.0


def test_a_stored_embedding_has_unit_norm(kb: KnowledgeBase) -> None:
    from tests.coretools import read_row

    hit = read_row(str(kb.db_dir), kb.name, 0)
    assert hit is not None and hit.vector is not None
    assert len(hit.vector) == 384
    assert hit.vector_norm == pytest.approx(1.0, abs=1e-3)

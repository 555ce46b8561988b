"""Golden files: what validates, where a problem is reported, and edits made on top of the file on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recall_gui.core.base.errors import GoldenFileError
from recall_gui.core.golden.golden import GoldenCheck, GoldenFile, edit_golden, parse_golden, read_golden


def test_a_valid_file_gives_its_checks_in_order_with_limit_5_when_left_out() -> None:
    text = json.dumps(
        {
            "checks": [
                {"db_name": "notes", "query": "capital of France", "expect": ["paris"]},
                {"db_name": "notes", "query": "password", "expect": ["pw-reset", "pw-rules"], "limit": 3},
            ]
        }
    )
    golden = parse_golden(text, "g.json")
    assert [check.key for check in golden.checks] == [
        (("name", "notes"), "capital of France", 5, ""),
        (("name", "notes"), "password", 3, ""),
    ]
    assert golden.checks[1].expect == ("pw-reset", "pw-rules")
    assert golden.checks[0].arguments() == {"db_name": "notes", "query": "capital of France", "limit": 5}


def test_a_file_written_again_keeps_a_left_out_limit_left_out() -> None:
    text = '{"checks": [{"db_name": "a", "query": "q", "expect": ["x"]}, ' + (
        '{"db_name": "a", "query": "r", "expect": ["y"], "limit": 7}]}'
    )
    again = json.loads(parse_golden(text, "g.json").to_json())
    assert again == json.loads(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"checks": [', "g.json: not valid JSON: Expecting value at line 1 column 13"),
        ("[]", "g.json: [] is not of type 'object'"),
        ('{"check": []}', "g.json: 'checks' is a required property"),
        (
            '{\n  "checks": [\n    {"db_name": "a", "query": "q", "expect": ["x"]},\n'
            '    {"db_name": "a", "query": "r"}\n  ]\n}',
            "g.json, line 4, check 2: 'expect' is a required property",
        ),
        (
            '{"checks": [\n{"db_name": "a", "query": "q",\n "expect": ["x", 5]}]}',
            "g.json, line 2, check 1, expect[1]: 5 is not of type 'string'",
        ),
        (
            '{"checks": [{"db_name": "a", "query": "q", "expect": []}]}',
            "g.json, line 1, check 1, expect: [] should be non-empty",
        ),
        (
            '{"checks": [{"db_name": "a", "query": "q", "expect": ["x"], "limit": 0}]}',
            "g.json, line 1, check 1, limit: 0 is less than the minimum of 1",
        ),
        (
            '{"checks": [{"db_name": "a", "query": "q", "expect": ["x"], "limit": "5"}]}',
            "g.json, line 1, check 1, limit: '5' is not of type 'integer'",
        ),
        (
            '{"checks": [{"db_name": "a", "query": "q", "expected": ["x"]}]}',
            "g.json, line 1, check 1: 'expect' is a required property",
        ),
        (
            '{"checks": [{"db_name": "a", "query": "q", "expect": ["x"], "note": "n"}]}',
            "g.json, line 1, check 1: Additional properties are not allowed ('note' was unexpected)",
        ),
        (
            '{"checks": [{"db_name": "a", "query": "q", "expect": ["x", "x"]}]}',
            "g.json, line 1, check 1, expect: ['x', 'x'] has non-unique elements",
        ),
        (
            '{"checks": [{"db_name": "a", "query": "q", "expect": ["x"]},\n'
            '  {"db_name": "a", "query": "q", "expect": ["y"], "limit": 5}]}',
            "g.json, line 2, check 2: repeats check 1 (the same database, query, limit and version)",
        ),
        (
            '{"checks": [{"db_name": "a", "uri": "/kb", "table": "t", "query": "q", "expect": ["x"]}]}',
            "g.json, line 1, check 1: names both a db_name and a uri",
        ),
        (
            '{"checks": [{"query": "q", "expect": ["x"]}]}',
            "g.json, line 1, check 1: names no database",
        ),
        (
            '{"checks": [{"uri": "/kb", "query": "q", "expect": ["x"]}]}',
            "g.json, line 1, check 1: 'table' is a dependency of 'uri'",
        ),
        (
            '{"checks": [{"db_name": "a", "query": "q\\ud800", "expect": ["x"]}]}',
            "g.json, line 1, check 1: query holds an unpaired surrogate",
        ),
    ],
)
def test_a_bad_file_is_refused_naming_the_file_the_line_and_the_path(text: str, expected: str) -> None:
    with pytest.raises(GoldenFileError) as raised:
        parse_golden(text, "g.json")
    assert raised.value.message.startswith(expected)


def test_a_missing_or_undecodable_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(GoldenFileError, match="no such file"):
        read_golden(tmp_path / "missing.json")
    latin = tmp_path / "latin.json"
    latin.write_bytes('{"checks": [{"db_name": "é", "query": "q", "expect": ["x"]}]}'.encode("latin-1"))
    with pytest.raises(GoldenFileError, match="not UTF-8 text"):
        read_golden(latin)


def test_adding_a_check_replaces_one_with_the_same_key_in_its_place() -> None:
    golden = GoldenFile(
        (GoldenCheck("a", "q", ("x",)), GoldenCheck("a", "r", ("y",)), GoldenCheck("a", "q", ("z",), 3))
    )
    updated = golden.with_check(GoldenCheck("a", "r", ("y", "w"), 5))
    assert [check.expect for check in updated.checks] == [("x",), ("y", "w"), ("z",)]
    added = golden.with_check(GoldenCheck("b", "q", ("v",)))
    assert [check.key for check in added.checks][-1] == (("name", "b"), "q", 5, "")
    assert [check.key for check in golden.without([(("name", "a"), "q", 5, "")]).checks] == [
        (("name", "a"), "r", 5, ""),
        (("name", "a"), "q", 3, ""),
    ]


def test_an_edit_is_made_on_top_of_the_file_as_it_is_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "checks" / "golden.json"
    edit_golden(path, lambda golden: golden.with_check(GoldenCheck("a", "q", ("x",))))
    # Another program (an editor) adds a check meanwhile; the next edit keeps it.
    data = json.loads(path.read_text(encoding="utf-8"))
    data["checks"].append({"db_name": "b", "query": "by hand", "expect": ["h"]})
    path.write_text(json.dumps(data), encoding="utf-8")
    edit_golden(path, lambda golden: golden.with_check(GoldenCheck("c", "r", ("y",))))
    assert [check.key for check in read_golden(path).checks] == [
        (("name", "a"), "q", 5, ""),
        (("name", "b"), "by hand", 5, ""),
        (("name", "c"), "r", 5, ""),
    ]


def test_an_edit_never_overwrites_a_file_that_does_not_validate(tmp_path: Path) -> None:
    path = tmp_path / "golden.json"
    path.write_text('{"checks": [{"db_name": "a"', encoding="utf-8")
    with pytest.raises(GoldenFileError, match="not valid JSON"):
        edit_golden(path, lambda golden: golden.with_check(GoldenCheck("a", "q", ("x",))))
    assert path.read_text(encoding="utf-8") == '{"checks": [{"db_name": "a"'


@pytest.mark.slow
def test_twenty_thousand_checks_are_read_and_a_problem_in_the_last_is_located() -> None:
    """Locating a check walks the file: done for every check, reading was quadratic (10,000 checks took
    minutes); now it is done once, for the problem reported."""
    checks = [{"db_name": "notes", "query": f"question {n}", "expect": [f"id{n}"]} for n in range(20_000)]
    text = json.dumps({"checks": checks}, indent=2)
    golden = parse_golden(text, "big.json")
    assert [check.query for check in golden.checks] == [f"question {n}" for n in range(20_000)]
    repeated = json.dumps({"checks": [*checks, checks[7]]}, indent=2)
    line = 3 + 7 * 20_000  # the checks start on line 3 and take 7 lines each
    with pytest.raises(GoldenFileError) as caught:
        parse_golden(repeated, "big.json")
    assert (
        caught.value.message == f"big.json, line {line}, check 20001: repeats check 8 "
        "(the same database, query, limit and version)"
    )

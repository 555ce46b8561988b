"""A golden file's numbers that JSON can write but a check cannot use (``3.0``, ``2**64``): refused like
every other golden-file error, naming the file, the check and the field, in the core, by ``check`` (status
2, one line, no traceback) and by the window's Checks page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recall_gui.core.base import GoldenFileError
from recall_gui.core.golden.golden import parse_golden
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

CASES = [
    ('"version": 3.0', "version: 3.0 is not of type 'integer'"),
    ('"version": 18446744073709551616', "version: 18446744073709551616 is greater than the maximum of "),
    ('"version": 9223372036854775808', "version: 9223372036854775808 is greater than the maximum of "),
    ('"limit": 5.0', "limit: 5.0 is not of type 'integer'"),
]


def golden_text(name: str, field: str) -> str:
    return '{"checks": [\n  {"db_name": "' + name + '", "query": "q", "expect": ["x"], ' + field + "}\n]}"


@pytest.mark.parametrize(("field", "said"), CASES)
def test_the_core_refuses_the_number_naming_the_check_and_the_field(field: str, said: str) -> None:
    with pytest.raises(GoldenFileError) as raised:
        parse_golden(golden_text("notes", field), "g.json")
    assert raised.value.message.startswith(f"g.json, line 2, check 1, {said}")


@pytest.mark.parametrize(("field", "said"), CASES[:2])
def test_check_refuses_the_number_with_status_2_and_one_line(
    kb: KnowledgeBase, tmp_path: Path, field: str, said: str
) -> None:
    path = tmp_path / "golden.json"
    path.write_text(golden_text(kb.name, field), encoding="utf-8")
    done = cli("check", "--registry", str(kb.registry_dir), str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"error: {path}, line 2, check 1, {said}")
    assert len(done.stderr.splitlines()) == 1, done.stderr


def test_a_whole_version_still_runs(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = tmp_path / "golden.json"
    check = {"db_name": kb.name, "query": "capital of France", "expect": ["paris"], "version": 1}
    path.write_text(json.dumps({"checks": [check]}), encoding="utf-8")
    assert cli("check", "--registry", str(kb.registry_dir), str(path)).returncode == 0

"""Numbers set in the environment (the storage timeout, the filter's memory bound) are honoured or refused
naming the variable, through the command line; never replaced by the default unseen."""

from __future__ import annotations

import json

import pytest

from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

QUERY = "How do I change my password?"


@pytest.mark.parametrize("typed", ["thirty", "0", "-5", "inf", "nan"])
def test_a_storage_timeout_that_is_no_positive_number_is_refused_naming_it(
    kb: KnowledgeBase, typed: str
) -> None:
    done = cli(
        "search", "--registry", str(kb.registry_dir), "--db", kb.name, QUERY,
        env={"RECALL_GUI_STORAGE_TIMEOUT": typed},
    )  # fmt: skip
    assert done.returncode != 0 and done.stdout == ""
    assert f"RECALL_GUI_STORAGE_TIMEOUT is '{typed}', not a number of seconds above 0" in done.stderr
    assert (
        "Set RECALL_GUI_STORAGE_TIMEOUT to a number of seconds (the default is 30), or unset it."
        in done.stderr
    )


def test_a_storage_timeout_that_is_a_positive_number_is_used(kb: KnowledgeBase) -> None:
    done = cli(
        "search", "--registry", str(kb.registry_dir), "--db", kb.name, "--limit", "1", QUERY,
        env={"RECALL_GUI_STORAGE_TIMEOUT": " 12.5 "},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"][0]["id"] == "pw-reset"


@pytest.mark.parametrize("typed", ["4GB", "0", "1.5"])
def test_a_filter_memory_bound_that_is_no_whole_number_is_refused_naming_it(
    kb: KnowledgeBase, typed: str
) -> None:
    done = cli(
        "search", "--registry", str(kb.registry_dir), "--db", kb.name, "--where", "id = 'pw-reset'", QUERY,
        env={"RECALL_GUI_FILTER_MEMORY_MB": typed},
    )  # fmt: skip
    assert done.returncode != 0 and done.stdout == ""
    assert f"RECALL_GUI_FILTER_MEMORY_MB is '{typed}', not a number of megabytes above 0" in done.stderr

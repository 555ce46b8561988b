"""Browsing pages through a bounded cache, against a real LanceDB knowledge base."""

from __future__ import annotations

import asyncio

import pytest

from recall_gui.core.session.session import Session
from recall_gui.core.storage.target import TableTarget
from recall_gui.core.tables.browse import BrowseRow, Page, fetch_page
from recall_gui.core.tables.paging import PageCache
from tests.kbtools import KnowledgeBase


def page_of_ids(offset: int, ids: list[str], total: int) -> Page:
    return Page.of_rows(offset, [BrowseRow(offset + i, row_id, "") for i, row_id in enumerate(ids)], total)


def test_scrolling_through_every_row_keeps_only_max_pages(session: Session, kb: KnowledgeBase) -> None:
    cache = PageCache(page_size=3, max_pages=2)

    async def scroll() -> list[str]:
        seen = []
        for row in range(len(kb.ids)):
            found = cache.row(row)
            if found is None:
                page = cache.page_of(row)
                where = TableTarget(str(kb.db_dir), kb.name)
                cache.store(await fetch_page(session, where, offset=cache.offset_of(page), limit=3))
                found = cache.row(row)
            assert found is not None
            seen.append(found.id)
            assert cache.pages_held <= 2
        return seen

    assert asyncio.run(scroll()) == list(kb.ids)
    assert cache.total == len(kb.ids)
    assert cache.rows_held <= 6


def test_least_recently_used_page_is_dropped_first() -> None:
    cache = PageCache(page_size=2, max_pages=2)
    cache.store(page_of_ids(0, ["a", "b"], 6))
    cache.store(page_of_ids(2, ["c", "d"], 6))
    assert cache.row(0) is not None  # page 0 is now the most recently used
    assert cache.store(page_of_ids(4, ["e", "f"], 6)) == [1]
    assert cache.has_page(0) and not cache.has_page(1) and cache.has_page(2)
    assert cache.row(2) is None


def test_a_short_last_page_answers_none_past_its_end() -> None:
    cache = PageCache(page_size=4, max_pages=1)
    cache.store(page_of_ids(4, ["e"], 5))
    assert cache.row(4) is not None and cache.row(4).id == "e"  # type: ignore[union-attr]
    assert cache.row(5) is None


def test_a_page_that_does_not_start_a_page_is_refused() -> None:
    with pytest.raises(ValueError, match="multiple of 4"):
        PageCache(page_size=4).store(page_of_ids(2, ["x"], 3))


def test_clear_forgets_rows_and_total() -> None:
    cache = PageCache(page_size=2)
    cache.store(page_of_ids(0, ["a"], 1))
    cache.clear()
    assert cache.total is None and cache.pages_held == 0 and cache.row(0) is None


def test_locate_names_the_page_and_the_index_and_marks_the_page_used() -> None:
    cache = PageCache(page_size=2, max_pages=2)
    first, second = page_of_ids(0, ["a", "b"], 3), page_of_ids(2, ["c"], 3)
    cache.store(first)
    cache.store(second)
    assert cache.locate(1) == (first, 1)
    assert cache.locate(2) == (second, 0)
    assert cache.locate(3) is None  # past the short last page
    assert cache.locate(1) is not None  # page 0 is now the most recently used
    cache.store(page_of_ids(4, ["e"], 5))
    assert cache.has_page(0) and not cache.has_page(1)


def test_a_page_built_from_rows_gives_the_same_rows_back() -> None:
    rows = [
        BrowseRow(10, "a", "first", 7, {"lang": "en", "n": 1}),
        BrowseRow(11, "b", "second", None, {"n": 2}),  # no "lang": read back as None
    ]
    page = Page.of_rows(10, rows, 40)
    assert len(page) == 2 and page.total == 40
    assert page.rows == (rows[0], BrowseRow(11, "b", "second", None, {"lang": None, "n": 2}))
    assert page.row(1).offset == 11 and page.extra == {"lang": ("en", None), "n": (1, 2)}

"""The newest-wins lane: only the newest request's outcome reaches the screen, its failure is shown in the
banner through the window's error-to-message function, and busy is cleared however it ends."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest
from PySide6.QtWidgets import QApplication, QLabel

from recall_gui.core.base.errors import RecallError
from recall_gui.core.messages import user_message
from recall_gui.qt.panels.banner import MessageBanner
from recall_gui.qt.query_op import NewestWins
from tests.qt.conftest import run


class Screen:
    """What the user sees: the status text, what the lane showed, and the message banner."""

    def __init__(self) -> None:
        self.status = QLabel("Ready")
        self.shown = QLabel()
        self.banner = MessageBanner()
        self.banner.hide()
        self.lane = NewestWins(
            lambda text: self.status.setText(text or "Ready"),
            lambda error: self.banner.show_message(user_message(error, "search")),
        )

    def banner_texts(self) -> list[str]:
        return [label.text() for label in self.banner.findChildren(QLabel) if label.text()]


@pytest.fixture
def screen(qapp: QApplication) -> Iterator[Screen]:
    made = Screen()
    yield made
    for widget in (made.status, made.shown, made.banner):
        widget.deleteLater()


def held(release: asyncio.Event, value: str, started: asyncio.Event) -> Callable[[], asyncio.Future[str]]:
    """An operation that sets ``started``, then returns ``value`` once ``release`` is set."""

    async def op() -> str:
        started.set()
        await release.wait()
        return value

    return lambda: asyncio.ensure_future(op())


def test_the_newest_request_is_shown_and_an_older_one_finishing_later_is_dropped(
    screen: Screen, loop: asyncio.AbstractEventLoop
) -> None:
    async def scenario() -> tuple[bool, bool]:
        release_old, release_new = asyncio.Event(), asyncio.Event()
        old_started, new_started = asyncio.Event(), asyncio.Event()
        old = asyncio.ensure_future(
            screen.lane.run(
                held(release_old, "old rows", old_started),
                busy="Searching old…",
                success=screen.shown.setText,
            )
        )
        await old_started.wait()  # the old request runs before the new one supersedes it
        new = asyncio.ensure_future(
            screen.lane.run(
                held(release_new, "new rows", new_started),
                busy="Searching new…",
                success=screen.shown.setText,
            )
        )
        await new_started.wait()
        assert screen.status.text() == "Searching new…"
        release_new.set()
        new_shown = await new
        assert screen.shown.text() == "new rows" and screen.status.text() == "Ready"
        release_old.set()
        return await old, new_shown

    old_shown, new_shown = run(loop, scenario())
    assert (old_shown, new_shown) == (False, True)
    assert screen.shown.text() == "new rows"  # the older result never overwrote it
    assert screen.status.text() == "Ready" and not screen.lane.busy


def test_an_older_request_finishing_first_leaves_the_newer_one_busy(
    screen: Screen, loop: asyncio.AbstractEventLoop
) -> None:
    async def scenario() -> None:
        release_old, release_new = asyncio.Event(), asyncio.Event()
        old_started, new_started = asyncio.Event(), asyncio.Event()
        old = asyncio.ensure_future(
            screen.lane.run(
                held(release_old, "old rows", old_started),
                busy="Searching old…",
                success=screen.shown.setText,
            )
        )
        await old_started.wait()
        new = asyncio.ensure_future(
            screen.lane.run(
                held(release_new, "new rows", new_started),
                busy="Searching new…",
                success=screen.shown.setText,
            )
        )
        await new_started.wait()
        release_old.set()
        assert await old is False
        assert screen.shown.text() == "" and screen.status.text() == "Searching new…" and screen.lane.busy
        release_new.set()
        assert await new is True

    run(loop, scenario())
    assert screen.shown.text() == "new rows" and screen.status.text() == "Ready"


def test_a_failure_is_shown_in_the_banner_and_busy_is_cleared(
    screen: Screen, loop: asyncio.AbstractEventLoop
) -> None:
    failures: list[str] = []

    async def fails() -> str:
        raise RecallError("the table is gone", hint="Choose another database.")

    shown = run(
        loop,
        screen.lane.run(
            fails,
            busy="Searching…",
            success=screen.shown.setText,
            failure=lambda e: failures.append(e.message),
        ),
    )
    assert shown is False and screen.shown.text() == ""
    assert not screen.banner.isHidden()
    assert (
        "The table is gone" in screen.banner_texts() and "Choose another database." in screen.banner_texts()
    )
    assert failures == ["the table is gone"]
    assert screen.status.text() == "Ready" and not screen.lane.busy


def test_a_superseded_failure_is_not_shown(screen: Screen, loop: asyncio.AbstractEventLoop) -> None:
    async def scenario() -> None:
        fail_now, started = asyncio.Event(), asyncio.Event()

        async def fails_later() -> str:
            started.set()
            await fail_now.wait()
            raise RecallError("the old search failed")

        old = asyncio.ensure_future(screen.lane.run(fails_later, busy="Old…", success=screen.shown.setText))
        await started.wait()
        screen.lane.supersede()  # e.g. the user browses instead
        fail_now.set()
        assert await old is False

    run(loop, scenario())
    assert screen.banner.isHidden() and screen.banner_texts() == []


def test_a_cancelled_request_clears_busy_and_shows_nothing(
    screen: Screen, loop: asyncio.AbstractEventLoop
) -> None:
    async def scenario() -> None:
        never, started = asyncio.Event(), asyncio.Event()
        task = asyncio.ensure_future(
            screen.lane.run(held(never, "rows", started), busy="Searching…", success=screen.shown.setText)
        )
        await started.wait()
        assert screen.status.text() == "Searching…"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(loop, scenario())
    assert screen.status.text() == "Ready" and not screen.lane.busy
    assert screen.shown.text() == "" and screen.banner.isHidden()

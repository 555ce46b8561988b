"""The window's one way to run background work (``qt/operations.py``): lanes that cancel by key, requests
where only the newest one's outcome reaches the screen, failures shown through the window's error function,
busy cleared however a request ends — and no other module of the window creates a task."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QLabel

import recall_gui.qt
from recall_gui.core.base.errors import RecallError
from recall_gui.core.messages import Topic, user_message
from recall_gui.qt.operations import Operations
from recall_gui.qt.panels.banner import MessageBanner
from tests.qt.conftest import run


class Screen:
    """What the user sees: the status text, what the lane showed, and the message banner."""

    def __init__(self) -> None:
        self.status = QLabel("Ready")
        self.shown = QLabel()
        self.banner = MessageBanner()
        self.banner.hide()
        self.topics: list[Topic] = []
        self.operations = Operations(self.show_error)
        self.lane = self.operations.lane("search", topic="search", show_busy=self.show_busy)
        #: A lane without a key: its requests are never cancelled, only the newest-wins guards them.
        self.beside = self.operations.lane(topic="search", show_busy=self.show_busy)

    def show_busy(self, text: str | None) -> None:
        self.status.setText(text or "Ready")

    def show_error(self, error: BaseException, topic: Topic) -> None:
        self.topics.append(topic)
        self.banner.show_message(user_message(error, topic))

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


async def waits_for(release: asyncio.Event, started: asyncio.Event, value: str = "done") -> str:
    started.set()
    await release.wait()
    return value


# --- the newest wins ----------------------------------------------------------------------------------------


def test_the_newest_request_is_shown_and_an_older_one_finishing_later_is_dropped(
    screen: Screen, loop: asyncio.AbstractEventLoop
) -> None:
    async def scenario() -> tuple[bool, bool]:
        release_old, release_new = asyncio.Event(), asyncio.Event()
        old_started, new_started = asyncio.Event(), asyncio.Event()
        old = screen.beside.run(
            held(release_old, "old rows", old_started),
            busy="Searching old…",
            success=screen.shown.setText,
        )
        await old_started.wait()  # the old request runs before the new one supersedes it
        new = screen.beside.run(
            held(release_new, "new rows", new_started),
            busy="Searching new…",
            success=screen.shown.setText,
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
    assert screen.status.text() == "Ready" and not screen.beside.busy


def test_an_older_request_finishing_first_leaves_the_newer_one_busy(
    screen: Screen, loop: asyncio.AbstractEventLoop
) -> None:
    async def scenario() -> None:
        release_old, release_new = asyncio.Event(), asyncio.Event()
        old_started, new_started = asyncio.Event(), asyncio.Event()
        old = screen.beside.run(
            held(release_old, "old rows", old_started),
            busy="Searching old…",
            success=screen.shown.setText,
        )
        await old_started.wait()
        new = screen.beside.run(
            held(release_new, "new rows", new_started),
            busy="Searching new…",
            success=screen.shown.setText,
        )
        await new_started.wait()
        release_old.set()
        assert await old is False
        assert screen.shown.text() == "" and screen.status.text() == "Searching new…" and screen.beside.busy
        release_new.set()
        assert await new is True

    run(loop, scenario())
    assert screen.shown.text() == "new rows" and screen.status.text() == "Ready"


def test_a_failure_is_shown_in_the_banner_about_the_lanes_topic_and_busy_is_cleared(
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
    assert failures == ["the table is gone"] and screen.topics == ["search"]
    assert screen.status.text() == "Ready" and not screen.lane.busy


def test_a_superseded_failure_is_not_shown(screen: Screen, loop: asyncio.AbstractEventLoop) -> None:
    async def scenario() -> None:
        fail_now, started = asyncio.Event(), asyncio.Event()

        async def fails_later() -> str:
            started.set()
            await fail_now.wait()
            raise RecallError("the old search failed")

        old = screen.lane.run(fails_later, busy="Old…", success=screen.shown.setText)
        await started.wait()
        screen.lane.supersede()  # e.g. the user browses instead
        fail_now.set()
        assert await old is False

    run(loop, scenario())
    assert screen.banner.isHidden() and screen.banner_texts() == []


def test_a_request_cancelled_in_its_lane_clears_busy_and_shows_nothing(
    screen: Screen, loop: asyncio.AbstractEventLoop
) -> None:
    async def scenario() -> None:
        never, started = asyncio.Event(), asyncio.Event()
        lane = screen.lane
        task = lane.run(held(never, "rows", started), busy="Searching…", success=screen.shown.setText)
        await started.wait()
        assert screen.status.text() == "Searching…" and lane.running
        assert lane.cancel() is True  # Esc
        with pytest.raises(asyncio.CancelledError):
            await task
        assert lane.cancel() is False  # nothing runs any more

    run(loop, scenario())
    assert screen.status.text() == "Ready" and not screen.lane.busy and not screen.lane.running
    assert screen.shown.text() == "" and screen.banner.isHidden()


def test_only_the_newest_requests_progress_is_shown_and_a_cancel_is_told(
    screen: Screen, loop: asyncio.AbstractEventLoop
) -> None:
    shown: list[str] = []
    cancels: list[str] = []

    async def scenario() -> None:
        release_old, old_started, never, new_started = (asyncio.Event() for _ in range(4))
        said: dict[str, Callable[[str], None]] = {}

        async def reports(
            name: str, release: asyncio.Event, started: asyncio.Event, progress: Callable[[str], None]
        ) -> str:
            said[name] = progress
            progress(f"{name} began")
            started.set()
            await release.wait()
            progress(f"{name} ended")
            return name

        old = screen.beside.run(
            lambda progress: reports("old", release_old, old_started, progress),
            progress=shown.append,
            busy="Old…",
            success=screen.shown.setText,
            cancelled=lambda: cancels.append("old"),
        )
        await old_started.wait()
        new = screen.lane.run(
            lambda progress: reports("new", never, new_started, progress),
            progress=shown.append,
            busy="New…",
            success=screen.shown.setText,
            cancelled=lambda: cancels.append("new"),
        )
        await new_started.wait()
        screen.beside.supersede()  # the old request's lane moves on: what it still says is dropped
        said["old"]("old again")
        release_old.set()
        assert await old is False
        assert screen.lane.cancel() is True  # Esc
        with pytest.raises(asyncio.CancelledError):
            await new

    run(loop, scenario())
    assert shown == ["old began", "new began"]
    assert cancels == ["new"] and screen.shown.text() == ""
    assert screen.status.text() == "Ready" and not screen.lane.busy and screen.banner.isHidden()


def test_a_request_cancelled_before_it_began_clears_busy_and_is_told(
    screen: Screen, loop: asyncio.AbstractEventLoop
) -> None:
    cancels: list[str] = []
    began = asyncio.Event()

    async def op() -> str:
        began.set()
        return "rows"

    task = screen.lane.run(
        op, busy="Searching…", success=screen.shown.setText, cancelled=lambda: cancels.append("x")
    )
    assert screen.status.text() == "Searching…" and screen.lane.busy  # busy at once, before the task runs
    assert screen.lane.cancel() is True
    with pytest.raises(asyncio.CancelledError):
        run(loop, task)
    assert not began.is_set() and cancels == ["x"]
    assert screen.status.text() == "Ready" and not screen.lane.busy and screen.shown.text() == ""


def test_a_newer_request_in_a_lane_with_a_key_cancels_the_older_without_telling_it(
    screen: Screen, loop: asyncio.AbstractEventLoop
) -> None:
    cancels: list[str] = []

    async def new_rows() -> str:
        return "new rows"

    async def scenario() -> tuple[asyncio.Task[bool], bool]:
        never, old_started = asyncio.Event(), asyncio.Event()
        old = screen.lane.run(
            held(never, "old rows", old_started),
            busy="Old…",
            success=screen.shown.setText,
            cancelled=lambda: cancels.append("old"),
        )
        await old_started.wait()
        new = screen.lane.run(new_rows, busy="New…", success=screen.shown.setText)
        return old, await new

    old, new_shown = run(loop, scenario())
    assert old.cancelled() and new_shown is True
    assert cancels == [] and screen.shown.text() == "new rows" and screen.status.text() == "Ready"


# --- cancel by key, side by side, awaited -----------------------------------------------------------------


def test_a_request_started_in_a_lane_cancels_the_one_running_there(
    screen: Screen, loop: asyncio.AbstractEventLoop
) -> None:
    checks = screen.operations.lane("checks")

    async def scenario() -> tuple[asyncio.Task[str], asyncio.Task[str]]:
        release, first_started, second_started = asyncio.Event(), asyncio.Event(), asyncio.Event()
        first = checks.start(waits_for(release, first_started, "first"))
        await first_started.wait()
        second = checks.start(waits_for(release, second_started, "second"))
        await second_started.wait()
        assert first.cancelled() and checks.running and screen.operations.running("checks")
        release.set()
        await second
        return first, second

    first, second = run(loop, scenario())
    assert first.cancelled() and second.result() == "second"
    assert not checks.running and not screen.operations.running("checks")
    assert screen.banner.isHidden()  # a cancel is no failure


def test_requests_of_a_lane_without_a_key_run_side_by_side(
    screen: Screen, loop: asyncio.AbstractEventLoop
) -> None:
    pages = screen.operations.lane()

    async def scenario() -> list[str]:
        release = asyncio.Event()
        started = [asyncio.Event(), asyncio.Event()]
        tasks = [pages.start(waits_for(release, event, f"page {n}")) for n, event in enumerate(started)]
        for event in started:
            await event.wait()
        assert screen.operations.pending == 2
        release.set()
        return [await task for task in tasks]

    assert run(loop, scenario()) == ["page 0", "page 1"]
    assert screen.operations.pending == 0


def test_an_unexpected_failure_reaches_the_banner_about_its_lanes_topic(
    screen: Screen, loop: asyncio.AbstractEventLoop
) -> None:
    async def broken() -> None:
        raise ValueError("something nobody expected")

    with pytest.raises(ValueError):
        run(loop, screen.operations.lane("registry", topic="registry").start(broken()))
    assert screen.banner_texts()[0] == "Unexpected error: ValueError: something nobody expected"
    assert screen.topics == ["registry"]


def test_an_awaited_tasks_failure_is_its_awaiters_and_never_reaches_the_banner(
    screen: Screen, loop: asyncio.AbstractEventLoop
) -> None:
    beside = screen.operations.lane(awaited=True)

    async def fails() -> None:
        raise RecallError("the server is gone")

    async def awaiter() -> str:
        try:
            await beside.start(fails())
        except RecallError as error:
            return error.message
        return "no failure"

    assert run(loop, awaiter()) == "the server is gone"
    assert screen.banner.isHidden() and screen.topics == []


def test_closing_cancels_every_operation_and_leaves_awaited_tasks_to_their_awaiter(
    screen: Screen, loop: asyncio.AbstractEventLoop
) -> None:
    operations = screen.operations
    search, beside = operations.lane("search-2"), operations.lane(awaited=True)

    async def scenario() -> tuple[asyncio.Task[str], asyncio.Task[str]]:
        release, started, held_started = asyncio.Event(), asyncio.Event(), asyncio.Event()
        running = search.start(waits_for(release, started))
        holder = beside.start(waits_for(release, held_started, "stopped by its owner"))
        await started.wait()
        await held_started.wait()
        operations.cancel_all()
        assert not search.running  # at once, before the cancel lands
        await operations.wait_idle()  # does not wait for the holder
        assert running.cancelled() and not holder.done() and operations.pending == 0
        release.set()  # its owner stops it
        await holder
        return running, holder

    running, holder = run(loop, scenario())
    assert running.cancelled() and holder.result() == "stopped by its owner"


def test_a_key_names_one_lane_in_a_window(screen: Screen) -> None:
    with pytest.raises(ValueError, match="'search'"):
        screen.operations.lane("search")
    screen.operations.lane()  # lanes without a key are as many as wanted
    screen.operations.lane()


# --- the one way ------------------------------------------------------------------------------------------

#: What starts work outside a lane: asyncio's own calls (``gather`` wraps each coroutine in a task), a pool's
#: ``submit`` (``executor.submit``), and the internals of the operations module.
TASK_STARTERS = frozenset({"create_task", "ensure_future", "_spawn", "TaskGroup", "Task", "gather", "submit"})
#: The one module that may start work outside a lane, and what: the map's drawing runs from pan and zoom
#: (no coroutine to await it), one picture at a time on the session's worker, and hands the picture back
#: through a Qt signal, so nothing of it outlives the view or loses a failure unseen.
ALLOWED = {"panels/map_view.py": ["submit"]}


def task_starters(source: str) -> list[str]:
    """The calls in ``source`` that start a task, as ``name:line``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in TASK_STARTERS:
            found.append((node.lineno, name))
    return [f"{name}:{line}" for line, name in sorted(found)]


def test_the_check_finds_each_way_to_start_work_outside_a_lane() -> None:
    source = """
async def f(executor, loop, coro, job):
    executor.submit(job)
    await asyncio.gather(coro)
    await gather(coro)
    asyncio.ensure_future(coro)
    loop.create_task(coro)
    await loop.run_in_executor(executor, job)  # awaited where it starts: allowed
"""
    assert task_starters(source) == ["submit:3", "gather:4", "gather:5", "ensure_future:6", "create_task:7"]


def test_only_the_operations_module_starts_tasks_in_the_window() -> None:
    root = Path(recall_gui.qt.__file__).parent
    modules = sorted(root.rglob("*.py"))
    assert len(modules) > 40  # the window's modules were found
    starters = {
        str(path.relative_to(root)): found
        for path in modules
        if (found := task_starters(path.read_text(encoding="utf-8")))
    }
    own = sorted(found.split(":")[0] for found in starters.pop("operations.py"))
    assert own == [
        "_spawn",
        "create_task",
        "gather",
    ]  # the lanes start through the one place that creates tasks
    allowed = {path: [found.split(":")[0] for found in starters.pop(path, [])] for path in ALLOWED}
    assert allowed == ALLOWED  # the exception is still needed, and is all it holds
    assert starters == {}, f"start these through a lane of qt/operations.py: {starters}"

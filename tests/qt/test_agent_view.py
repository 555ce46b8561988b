"""The Agent view: the tool and a search as a real MCP client gets them from the real `recall-gui mcp`.

Every test starts the real server subprocess through the window and compares what the view shows with
what the `recall-gui` command prints for the same registry, config dir and arguments.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QPlainTextEdit, QPushButton, QSpinBox, QTableView
from pytestqt.qtbot import QtBot

from recall_gui.core.base.paths import CONFIG_ENV, RegistryLocation
from recall_gui.core.registry.registry_changes import set_active
from recall_gui.core.registry.suffix_store import SuffixMode, SuffixStore
from recall_gui.mcp.probe import ServerLaunch
from recall_gui.qt.agent_server import ServerState, launch_for
from recall_gui.qt.main_window import MainWindow
from recall_gui.qt.pages.agent.page import AgentPage
from tests.kbtools import KnowledgeBase, cosh_entry, cosh_listing, described, view_entry, write_registry
from tests.qt.conftest import TIMEOUT_S, WindowFactory, run, waiting_for
from tests.waiting import wait_until

QUERY = "How do I change my password?"


def cli(window: MainWindow, *args: str) -> subprocess.CompletedProcess[str]:
    """The `recall-gui` command for the window's registry and config dir (where its suffix is saved)."""
    env = {**os.environ, CONFIG_ENV: str(window.services.drafts.suffix.store.directory)}
    return subprocess.run(
        [sys.executable, "-m", "recall_gui", *args, "--registry", str(window.location.directory)],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT_S,
    )


def open_agent_view(window: MainWindow, loop: asyncio.AbstractEventLoop) -> AgentPage:
    """Switch to the Agent view, which starts the server, and wait for its first listing."""
    with waiting_for(loop, window.agent.listingFinished):
        window.pages.setCurrentWidget(window.agent)
    return window.agent


def server_processes(registry_dir: Path) -> list[psutil.Process]:
    """This test's `recall-gui mcp` subprocesses for ``registry_dir``."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            command = child.cmdline()
        except psutil.NoSuchProcess:
            continue
        if "mcp" in command and str(registry_dir) in command:
            found.append(child)
    return found


def assert_gone(process: psutil.Process) -> None:
    """Exited and reaped: no process, not even a zombie, has this pid any more."""
    with pytest.raises(psutil.NoSuchProcess):
        status = process.status()
        pytest.fail(f"the server process {process.pid} is still there ({status})")


def exited(process: psutil.Process) -> bool:
    """Dead, whether or not its parent has reaped it yet."""
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def search_in_window(window: MainWindow, qtbot: QtBot, loop: asyncio.AbstractEventLoop, query: str) -> None:
    edit = window.findChild(QLineEdit, "queryEdit")
    edit.setText(query)
    with waiting_for(loop, window.knowledge.searchFinished):
        qtbot.keyClick(edit, Qt.Key.Key_Return)


def run_through_server(window: MainWindow, loop: asyncio.AbstractEventLoop) -> AgentPage:
    agent = window.agent
    with waiting_for(loop, agent.payloadFinished):
        agent.run_button.click()
    return agent


def test_the_view_lists_the_tool_exactly_as_recall_gui_tool_prints_it(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    assert server_processes(kb.registry_dir) == []  # nothing starts before the view is opened
    agent = open_agent_view(window, loop)
    assert agent.server.state is ServerState.RUNNING
    assert len(server_processes(kb.registry_dir)) == 1

    printed = cli(window, "tool")
    assert printed.returncode == 0, printed.stderr
    tool = json.loads(printed.stdout)
    # Equal as JSON (the SDK's models may order the schema's keys differently from the server's text).
    assert json.loads(agent.tool_json_view.toPlainText()) == tool
    assert agent.description_view.toPlainText() == tool["description"]
    assert json.loads(agent.schema_view.toPlainText()) == tool["inputSchema"]
    state = agent.server_state.text()
    assert "recall-gui" in state and "MCP 2025-11-25" in state and str(kb.registry_dir) in state
    assert agent.verdict.message == "The agent gets exactly what you see."
    assert agent.diff_view.lines == ()
    assert agent.error_note.isHidden()


def test_an_unsaved_suffix_edit_shows_a_diff_until_saving_it_is_served(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    agent = open_agent_view(window, loop)
    suffix = window.findChild(QPlainTextEdit, "suffixEdit")
    generated = cosh_listing((kb.name, f"{kb.name} knowledge base", kb.db_dir))
    assert suffix.toPlainText() == ""

    updates: list[int] = []
    agent.diffUpdated.connect(lambda: updates.append(1))
    with waiting_for(loop, agent.diffUpdated):  # once, after the editor rested
        for end in range(1, len("Prefer notes for password questions.\n") + 1):
            suffix.setPlainText("Prefer notes for password questions.\n"[:end])
    assert updates == [1]
    assert agent.verdict.message.startswith("Unsaved edits:")
    assert agent.verdict.tone == "warning"
    added = [line for line in agent.diff_view.lines if line.kind == "added"]
    assert [line.text for line in added if line.text] == ["Prefer notes for password questions."]
    assert not [line for line in agent.diff_view.lines if line.kind == "removed" and line.text]
    assert "+ Prefer notes for password questions." in agent.diff_view.toPlainText()
    # The served description is still the old one: the listing did not change.
    assert agent.description_view.toPlainText() == described(generated)

    with waiting_for(loop, agent.listingFinished):  # the server's next listing after the save
        window.findChild(QPushButton, "saveSuffixButton").click()
    assert agent.diff_view.lines == ()
    assert agent.verdict.message == "The agent gets exactly what you see."
    assert agent.description_view.toPlainText() == (
        described(generated + "Prefer notes for password questions.\n")
    )
    assert json.loads(cli(window, "tool").stdout) == json.loads(agent.tool_json_view.toPlainText())
    run(loop, window.operations.wait_idle())


def test_a_suffix_saved_elsewhere_is_reported_as_served_but_not_shown(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    """Another recall-gui window (or a hand edit) saved a suffix: the server announces the change, and the
    view says the agent gets something this window's editor does not show."""
    window = open_window(kb.registry_dir)
    agent = open_agent_view(window, loop)
    with waiting_for(loop, agent.listingFinished):
        SuffixStore(window.services.drafts.suffix.store.directory).save(
            SuffixMode.NOTES, "Saved by another window.\n", ""
        )
    assert agent.verdict.tone == "bad"
    assert agent.verdict.message.startswith("The server serves something else")
    removed = [line.text for line in agent.diff_view.lines if line.kind == "removed"]
    assert "Saved by another window." in removed
    run(loop, window.operations.wait_idle())


def test_saved_notes_stay_served_with_a_database_cosh_activates_later(
    make_kb: Callable[..., KnowledgeBase], open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    """The saved suffix never freezes the list: after cosh activates a database, the agent is told about
    it, with the user's notes after it, and the view says the agent gets what the page shows."""
    kb = make_kb()
    other = view_entry(kb, "archive", "Old notes")
    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir), other], active=[kb.name])
    window = open_window(kb.registry_dir)
    agent = open_agent_view(window, loop)
    window.findChild(QPlainTextEdit, "suffixEdit").setPlainText("Prefer notes.\n")
    with waiting_for(loop, agent.listingFinished):
        window.findChild(QPushButton, "saveSuffixButton").click()
    with waiting_for(loop, window.registryReloaded):  # the window notices the change
        set_active(kb.registry_dir, "archive", True)

    # The server announces it too; the view lists and compares again (in whichever order they come).
    settled = asyncio.Event()

    def check() -> None:
        listed = "- Name: archive" in agent.description_view.toPlainText()
        if listed and agent.verdict.message == "The agent gets exactly what you see.":
            settled.set()

    agent.diffUpdated.connect(check)
    check()
    run(loop, settled.wait())
    agent.diffUpdated.disconnect(check)
    served = agent.description_view.toPlainText()
    assert "- Name: archive\n  Description: Old notes\n" in served and served.endswith("\n\nPrefer notes.\n")
    assert agent.verdict.message == "The agent gets exactly what you see."
    assert json.loads(cli(window, "tool").stdout)["description"] == served
    run(loop, window.operations.wait_idle())


def test_the_current_query_through_the_server_is_what_recall_gui_search_prints(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    window.findChild(QSpinBox, "limitSpin").setValue(3)
    search_in_window(window, qtbot, loop, QUERY)
    agent = open_agent_view(window, loop)
    assert json.loads(agent.call_arguments.text().removeprefix("arguments: ")) == {
        "db_name": kb.name,
        "query": QUERY,
        "limit": 3,
    }

    run_through_server(window, loop)
    printed = cli(window, "search", "--db", kb.name, "--limit", "3", QUERY)
    assert printed.returncode == 0, printed.stderr
    assert agent.payload_raw.toPlainText() == printed.stdout.rstrip("\n")
    assert agent.last_payload is not None and agent.last_payload.text == printed.stdout.rstrip("\n")
    assert agent.payload_pretty.toPlainText() == json.dumps(
        json.loads(printed.stdout), indent=2, ensure_ascii=False
    )
    assert json.loads(agent.payload_result.toPlainText()) == {
        "content": [{"type": "text", "text": printed.stdout.rstrip("\n")}],
        "isError": False,
    }
    assert agent.payload_state.message.startswith("Result (isError: false)")
    assert "Matches the window: the same 3 results, in the same order." in agent.payload_state.message
    assert agent.payload_state.tone == "good"
    # ... and the window's results table shows those very ids, in that order.
    table = window.findChild(QTableView, "resultsTable")
    shown = [table.model().index(row, 1).data() for row in range(table.model().rowCount())]
    assert shown == [result["id"] for result in json.loads(printed.stdout)["results"]]
    run(loop, window.operations.wait_idle())

    # The query box emptied (or changed): the payload below is never taken for this call's answer.
    window.knowledge.query_bar.query_edit.clear()
    assert agent.call_arguments.text().startswith("No query typed")
    assert agent.payload_state.message.startswith("Shown below: the payload for an earlier call (")
    assert "Matches the window" not in agent.payload_state.message
    window.knowledge.query_bar.query_edit.setText(QUERY)  # back to the call that was answered
    assert "Matches the window: the same 3 results" in agent.payload_state.message


def test_with_a_filter_the_payload_is_compared_in_the_agents_scope_and_the_view_named(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    window.findChild(QSpinBox, "limitSpin").setValue(3)
    where_edit = window.knowledge.filter_bar.where_edit
    where_edit.setText("id LIKE 'pw%'")
    with waiting_for(loop, window.knowledge.browseReady):
        qtbot.keyClick(where_edit, Qt.Key.Key_Return)
    search_in_window(window, qtbot, loop, QUERY)
    table = window.findChild(QTableView, "resultsTable")
    shown = [table.model().index(row, 1).data() for row in range(table.model().rowCount())]
    assert len(shown) == 2  # the filter keeps two rows

    agent = open_agent_view(window, loop)
    run_through_server(window, loop)
    printed = cli(window, "search", "--db", kb.name, "--limit", "3", QUERY)
    assert agent.payload_raw.toPlainText() == printed.stdout.rstrip("\n")
    assert [r["id"] for r in json.loads(printed.stdout)["results"]] != shown
    message = agent.payload_state.message
    assert message.endswith(
        "Matches the window's search as the agent runs it: the same 3 results, in the same order. "
        "The knowledge page shows another view: the agent searches without your filter."
    )
    assert "Matches the window:" not in message
    run(loop, window.operations.wait_idle())


def test_an_inactive_database_shows_the_servers_tool_error(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    kb = make_kb()
    archive = view_entry(kb, "archive", "Old notes")
    registry_dir = write_registry(
        tmp_path / "reg", [cosh_entry(kb.name, kb.db_dir), archive], active=[kb.name]
    )
    window = open_window(registry_dir)
    window.findChild(QLineEdit, "queryEdit").setText(QUERY)
    with waiting_for(loop, window.knowledge.searchFinished):
        window.knowledge.database_bar.databaseChosen.emit("archive")  # the user picks it in the dropdown
    agent = open_agent_view(window, loop)

    run_through_server(window, loop)
    printed = cli(window, "search", "--db", "archive", QUERY)
    assert printed.returncode == 1
    message = f"Database 'archive' not found. Active databases: {kb.name}"
    assert printed.stderr.startswith(f"error: {message}\n")
    assert agent.payload_raw.toPlainText() == message
    assert json.loads(agent.payload_result.toPlainText()) == {
        "content": [{"type": "text", "text": message}],
        "isError": True,
    }
    state = agent.payload_state.message
    assert state.startswith("Tool error (isError: true)")
    assert "while the window finds 5 results" in state
    assert "archive is not active: agents cannot search it" in state
    assert agent.payload_state.tone == "bad"
    run(loop, window.operations.wait_idle())


def test_closing_the_window_terminates_the_server(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    agent = open_agent_view(window, loop)
    (process,) = server_processes(kb.registry_dir)
    with waiting_for(loop, agent.server.stateChanged):
        window.close()
    assert agent.server.state is ServerState.STOPPED
    assert_gone(process)
    agent.request_listing()  # e.g. a late announcement or timer: it must not start another server
    run(loop, window.operations.wait_idle())
    assert agent.server.state is ServerState.STOPPED
    assert server_processes(kb.registry_dir) == []


def test_a_server_that_cannot_start_is_explained_and_the_window_stays_usable(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    agent = window.agent
    broken = "import sys; print('recall-gui mcp: the mcp package is missing', file=sys.stderr); sys.exit(3)"
    agent.server.launch = lambda _target: ServerLaunch(sys.executable, ("-c", broken), dict(os.environ))
    open_agent_view(window, loop)
    assert agent.server.state is ServerState.FAILED
    assert agent.error_note.isVisible()
    note = agent.error_note.message
    assert note.startswith("Could not connect to the MCP server: the server closed the connection")
    assert "Press Refresh to start the server again." in note
    assert "the mcp package is missing" in note  # the server's own last words
    assert not window.banner.isVisible()  # the rest of the window is not bothered

    window.pages.setCurrentWidget(window.knowledge)
    search_in_window(window, qtbot, loop, QUERY)
    table = window.findChild(QTableView, "resultsTable")
    assert table.model().index(0, 1).data() == "pw-reset"

    agent.server.launch = launch_for
    window.pages.setCurrentWidget(agent)
    with waiting_for(loop, agent.listingFinished):
        agent.refresh_button.click()
    assert agent.server.state is ServerState.RUNNING
    assert agent.error_note.isHidden()
    assert agent.verdict.message == "The agent gets exactly what you see."
    run(loop, window.operations.wait_idle())


def test_a_crashed_server_is_reported_and_refresh_starts_a_new_one(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    search_in_window(window, qtbot, loop, QUERY)
    agent = open_agent_view(window, loop)
    (crashed,) = server_processes(kb.registry_dir)
    crashed.kill()  # not waited for here: reaping it is the window's business
    wait_until(lambda: exited(crashed), "the killed server has exited", TIMEOUT_S)

    run_through_server(window, loop)
    assert agent.server.state is ServerState.FAILED
    assert "the server closed the connection" in agent.payload_state.message
    assert "Press Refresh" in agent.payload_state.message
    assert agent.error_note.isVisible()
    assert "Press Refresh to start the server again." in agent.error_note.message
    assert agent.description_view.toPlainText() == ""  # nothing is shown that the server does not serve
    assert agent.verdict.message == "Not compared yet: the server has not listed the tool."

    with waiting_for(loop, agent.listingFinished):
        agent.refresh_button.click()
    assert agent.server.state is ServerState.RUNNING
    (restarted,) = server_processes(kb.registry_dir)
    assert restarted.pid != crashed.pid
    run_through_server(window, loop)
    assert "Matches the window" in agent.payload_state.message
    run(loop, window.operations.wait_idle())


def test_another_registry_directory_gets_its_own_server(
    make_kb: Callable[..., KnowledgeBase], open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    first, second = make_kb("notes"), make_kb("handbook", "The team handbook")
    window = open_window(first.registry_dir)
    agent = open_agent_view(window, loop)
    (old,) = server_processes(first.registry_dir)

    window.services.location = RegistryLocation(second.registry_dir, "--registry")
    with waiting_for(loop, agent.listingFinished):
        window.reread_registry()
    assert_gone(old)
    assert len(server_processes(second.registry_dir)) == 1
    assert "- Name: handbook\n  Description: The team handbook" in agent.description_view.toPlainText()
    assert str(second.registry_dir) in agent.server_state.text()
    run(loop, window.operations.wait_idle())

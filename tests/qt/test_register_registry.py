"""The "Add to agents' databases" dialog says which registry it writes and who reads it: recall-gui's own
registry (when there is no cosh registry) is read by `recall-gui mcp`, never by cosh; cosh's registry is
read by both. The banner after adding says the same."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from recall_gui.qt.main_window import MainWindow
from tests.foldertools import write_langchain_table
from tests.kbtools import KnowledgeBase, cosh_entry, write_registry
from tests.qt.conftest import WindowFactory, run, waiting_for


def add_dialog_intro(window: MainWindow, loop: asyncio.AbstractEventLoop, folder: Path) -> str:
    assert run(loop, window.opened.open_place(str(folder)))
    with waiting_for(loop, window.opened.addDialogShown):
        window.add_to_agents_action.trigger()
    dialog = window.opened.add_dialog
    assert dialog is not None
    return str(dialog.findChild(type(dialog.problem), "addIntro").text())


def test_with_no_cosh_registry_the_dialog_names_the_apps_own_registry_which_cosh_never_reads(
    kb: KnowledgeBase,
    passage_vectors: Any,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    app_registry = Path(os.environ["RECALL_GUI_DATA_DIR"]) / "registry"
    cosh_file = Path(os.environ["XDG_DATA_HOME"]) / "cosh" / "rag_dbs.json"
    assert not cosh_file.exists()
    write_registry(app_registry, [cosh_entry(kb.name, kb.db_dir)])
    folder = tmp_path / "langchain"
    write_langchain_table(folder, "vectorstore", passage_vectors)
    window = open_window(None)
    assert window.location.source == "app"

    intro = add_dialog_intro(window, loop, folder)
    assert f"to recall-gui's own registry ({app_registry / 'rag_dbs.json'})" in intro
    assert f"`recall-gui mcp` reads it; cosh does not (cosh reads only {cosh_file})" in intro
    assert "cosh and" not in intro
    dialog = window.opened.add_dialog
    assert dialog is not None
    with waiting_for(loop, window.registryReloaded):
        dialog.add_button.click()
    run(loop, window.tasks.wait_idle())
    message = window.banner.message
    assert message is not None and message.text == "Added vectorstore to the agents' databases (active)."
    assert message.hint is not None
    assert message.hint.startswith("`recall-gui mcp` offers it from its next tool listing when it reads")
    assert "cosh does not read this registry" in message.hint
    assert not cosh_file.exists()


def test_on_coshs_registry_the_dialog_says_cosh_and_the_mcp_server_read_it(
    kb: KnowledgeBase,
    passage_vectors: Any,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    cosh_dir = Path(os.environ["XDG_DATA_HOME"]) / "cosh"
    write_registry(cosh_dir, [cosh_entry(kb.name, kb.db_dir)])
    folder = tmp_path / "langchain"
    write_langchain_table(folder, "vectorstore", passage_vectors)
    window = open_window(None)
    assert window.location.source == "cosh"
    intro = add_dialog_intro(window, loop, folder)
    assert f"to cosh's registry ({cosh_dir / 'rag_dbs.json'}), which cosh and `recall-gui mcp` read." in intro

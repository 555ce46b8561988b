"""The window's menus and keyboard shortcuts: File, Edit, Search, Database, View and Help, and the
database dropdown's context menu."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QMainWindow, QMenu

from recall_gui.core.base import RegistryLocation
from recall_gui.qt.actions.databases import DatabaseActions
from recall_gui.qt.actions.opened_tables import OpenedTables
from recall_gui.qt.help_menu import show_about, show_shortcuts
from recall_gui.qt.pages.knowledge.page import KnowledgePage
from recall_gui.qt.widgets import PageTabs

EXPORT_TIP = "Save the search results, or every row of the browsed table (that the filter keeps), as {}"

#: The View menu: each page's title and shortcut, in the order of the tabs.
PAGE_SHORTCUTS = (
    ("&Knowledge Base", "Ctrl+1"),
    ("Agent's &Tool Description", "Ctrl+2"),
    ("&Agent View", "Ctrl+3"),
    ("Agent &Log", "Ctrl+4"),
    ("&Checks", "Ctrl+5"),
    ("&Duplicates", "Ctrl+6"),
    ("&History", "Ctrl+7"),
    ("&Map", "Ctrl+8"),
    ("H&ealth", "Ctrl+9"),
    ("&Reach", "Ctrl+0"),
    ("Re&view", "Ctrl+R"),
)


@dataclass(frozen=True)
class WindowCommands:
    """What the window's own actions do (the rest belong to the pages)."""

    ask_folder: Callable[[], None]
    reload: Callable[[], None]
    build_demo: Callable[[], None]
    focus_query: Callable[[], None]
    focus_results: Callable[[], None]
    escape: Callable[[], None]


class WindowMenus:
    """The window's actions (each also a shortcut) and its menu bar."""

    def __init__(
        self,
        window: QMainWindow,
        location: RegistryLocation,
        *,
        knowledge: KnowledgePage,
        opened: OpenedTables,
        pages: PageTabs,
        database_actions: DatabaseActions,
        commands: WindowCommands,
    ) -> None:
        self.window = window
        self.knowledge = knowledge
        self.opened = opened
        self.database_actions = database_actions
        self.export_csv_action = self._action(
            "Export as &CSV…",
            "Ctrl+E",
            lambda: knowledge.exporter.ask_export("csv"),
            EXPORT_TIP.format("CSV"),
        )
        self.export_json_action = self._action(
            "Export as &JSON…",
            "Ctrl+Shift+E",
            lambda: knowledge.exporter.ask_export("json"),
            EXPORT_TIP.format("JSON"),
        )
        self.open_folder_action = self._action(
            "&Open Folder…",
            QKeySequence.StandardKey.Open,
            commands.ask_folder,
            "Open a LanceDB folder read-only, without registering it",
        )
        self.open_uri_action = self._action(
            "Open &URI…",
            None,
            lambda: opened.ask_uri(knowledge.read_inputs()),
            "Open a LanceDB database on object storage (s3://…), read-only",
        )
        self.recent_menu = QMenu("Open &Recent", window)
        self.recent_menu.setObjectName("recentMenu")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.add_to_agents_action = self._action(
            "&Add to Agents' Databases…",
            None,
            opened.ask_register,
            "Register the opened table for agents (the dialog says which registry, and who reads it)",
        )
        self.reload_action = self._action(
            "&Reload Registry", "F5", commands.reload, "Read the registry again"
        )
        self.demo_action = self._action(
            "Build &Demo Knowledge Base…", None, commands.build_demo, "Add Python's help topics as a demo"
        )
        self.demo_action.setEnabled(location.is_app_registry)
        self.quit_action = self._action("&Quit", QKeySequence.StandardKey.Quit, window.close)
        self.focus_query_action = self._action("&Focus Query", "Ctrl+L", commands.focus_query)
        self.focus_results_action = self._action(
            "Focus &Results",
            "F6",
            commands.focus_results,
            "The rows shown: the arrow keys move through them",
        )
        # Down in the query goes to the results, as in a search field with a list below it.
        down = QShortcut(QKeySequence(Qt.Key.Key_Down), knowledge.query_bar.query_edit)
        down.setContext(Qt.ShortcutContext.WidgetShortcut)
        down.activated.connect(knowledge.results.focus_rows)
        self.search_action = self._action("&Search", None, knowledge.request_search)
        self.search_action.setShortcut(QKeySequence("Return"))
        self.search_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)  # shown in the menu only
        self.cancel_action = self._action("&Cancel Search", "Esc", commands.escape)
        self.browse_action = self._action("&Browse All Rows", "Ctrl+B", knowledge.browse_all, "Every row")
        self.page_actions = [
            self._action(text, shortcut, lambda _checked=False, n=number: pages.setCurrentIndex(n))
            for number, (text, shortcut) in enumerate(PAGE_SHORTCUTS)
        ]
        self.about_action = self._action("&About recall-gui", None, lambda: show_about(window, location))
        self.shortcuts_action = self._action("&Keyboard Shortcuts", "F1", lambda: show_shortcuts(window))
        self._fill_menu_bar()
        combo = knowledge.database_bar.combo
        combo.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        combo.customContextMenuRequested.connect(
            lambda point: self._database_menu_at(combo.mapToGlobal(point))
        )

    def _action(self, text: str, shortcut: Any = None, slot: Any = None, tip: str = "") -> QAction:
        action = QAction(text, self.window)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        if slot is not None:
            action.triggered.connect(slot)
        self.window.addAction(action)
        return action

    def _fill_menu_bar(self) -> None:
        menus = self.window.menuBar()
        file_menu = menus.addMenu("&File")
        file_menu.addActions([self.open_folder_action, self.open_uri_action])
        file_menu.addMenu(self.recent_menu)
        file_menu.addAction(self.add_to_agents_action)
        file_menu.addSeparator()
        file_menu.addActions([self.export_csv_action, self.export_json_action])
        file_menu.addSeparator()
        file_menu.addActions([self.reload_action, self.demo_action])
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        menus.addMenu("&Edit").addAction(self.knowledge.results.copy_action)
        search_menu = menus.addMenu("&Search")
        search_menu.addActions([self.focus_query_action, self.focus_results_action])
        search_menu.addActions([self.search_action, self.cancel_action])
        search_menu.addAction(self.browse_action)
        search_menu.addSeparator()
        tools = self.knowledge.entry_tools
        search_menu.addActions([tools.more_like_action, tools.add_golden_action, tools.review_action])
        self.window.addActions([tools.more_like_action, tools.add_golden_action, tools.review_action])
        self.database_menu = menus.addMenu("&Database")
        self.database_menu.setObjectName("databaseMenu")
        self.database_menu.addActions(self.database_actions.actions)
        self.database_menu.aboutToShow.connect(self.database_actions.update)
        menus.addMenu("&View").addActions(self.page_actions)
        menus.addMenu("&Help").addActions([self.shortcuts_action, self.about_action])

    def _database_menu_at(self, where: QPoint) -> None:
        name = self.database_actions.subject()
        if name is not None:
            self.database_actions.menu_for(name, self.window).exec(where)

    def _fill_recent_menu(self) -> None:
        menu, opened = self.recent_menu, self.opened
        menu.clear()
        places = opened.recent.places()
        for place in places:
            action = menu.addAction(place.label)
            action.triggered.connect(
                lambda _checked=False, p=place: opened.open_recent(p, self.knowledge.read_inputs())
            )
        if not places:
            menu.addAction("No folders opened yet").setEnabled(False)
            return
        menu.addSeparator()
        menu.addAction("Clear Recent", opened.recent.clear)

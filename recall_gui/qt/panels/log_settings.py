"""Above the Agent log page: whether the servers record agents' calls, the log's size bound, and where it
is. Both live in ``settings.json``, which every server reads (the servers are other processes)."""

from __future__ import annotations

import os

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QSizePolicy, QSpinBox, QWidget

from recall_gui.core.agent_log import SWITCH_ENV, LogFiles, switch_from_env
from recall_gui.core.base import MB, AppSettings, AppSettingsError, SettingsStore
from recall_gui.qt.widgets import selectable_label

#: The size bound the row offers, in MB.
MAX_MB = 1024


class LogSettingsRow(QWidget):
    """``logRecordCheck``, ``logMaxSpin`` and ``logLocation``."""

    #: The user changed the switch or the bound (not :meth:`show_saved`).
    changed = Signal()

    def __init__(self, store: SettingsStore, files: LogFiles, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store, self.files = store, files
        self.record_check = QCheckBox("&Record agents' calls")
        self.record_check.setObjectName("logRecordCheck")
        self.record_check.setToolTip(
            "recall-gui mcp writes each call (time, client, arguments, result ids, timings) to the log "
            "below. Nothing leaves this machine."
        )
        self.max_spin = QSpinBox()
        self.max_spin.setObjectName("logMaxSpin")
        self.max_spin.setRange(1, MAX_MB)
        self.max_spin.setSuffix(" MB")
        self.max_spin.setToolTip("The log keeps the newest calls within this size; older ones are dropped")
        self.location = selectable_label("logLocation")
        self.location.setEnabled(False)  # the palette's dim text: a detail
        # A long path is cut rather than widening the window; the tooltip holds all of it.
        self.location.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.record_check)
        row.addSpacing(12)
        row.addWidget(QLabel("Keep at most"))
        row.addWidget(self.max_spin)
        row.addSpacing(12)
        row.addWidget(self.location, 1)
        self.record_check.toggled.connect(lambda _on: self.changed.emit())
        self.max_spin.valueChanged.connect(lambda _value: self.changed.emit())

    def chosen(self) -> AppSettings:
        return AppSettings(self.record_check.isChecked(), self.max_spin.value() * MB)

    def show_saved(self) -> list[str]:
        """Show the switch and bound as the servers will read them, and where the log is; returns what
        overrides them or keeps them from being read, to be said."""
        problems: list[str] = []
        try:
            settings = self.store.load()
        except AppSettingsError as error:
            settings = AppSettings(agent_log=False)
            problems.append(error.full_text() + " Until then the servers record nothing.")
        try:
            if not switch_from_env(os.environ.get(SWITCH_ENV)):
                problems.append(
                    f"{SWITCH_ENV} is off in this window's environment: the Agent view's server records "
                    "nothing (clients start servers with environments of their own)."
                )
        except AppSettingsError as error:
            problems.append(error.full_text())
        for widget in (self.record_check, self.max_spin):
            widget.blockSignals(True)  # showing what is saved is not a change to save
        self.record_check.setChecked(settings.agent_log)
        self.max_spin.setValue(max(1, min(MAX_MB, round(settings.agent_log_max_bytes / MB))))
        for widget in (self.record_check, self.max_spin):
            widget.blockSignals(False)
        current = self.files.current
        self.location.setText(f"Log: {current}")
        self.location.setToolTip(
            f"{current}\nSet {SWITCH_ENV}=off in a server's environment to keep it from recording; "
            "RECALL_GUI_AGENT_LOG_DIR moves the log"
        )
        return problems

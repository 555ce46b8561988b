"""The dialog that opens an object-store URI (``s3://bucket/prefix``) with its storage options."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from recall_gui.qt.widgets import text_view

OPTIONS_PLACEHOLDER = (
    "One KEY=VALUE per line, as a registry entry's storage_options, e.g.\n"
    "aws_endpoint=http://127.0.0.1:9000\naws_region=eu-west-1\nallow_http=true"
)


def parse_options(text: str) -> tuple[dict[str, str], str | None]:
    """The options of ``text`` (one ``KEY=VALUE`` a line, blank lines and ``#`` comments skipped), and
    what is wrong with it, if anything."""
    options: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, sep, value = stripped.partition("=")
        if not sep or not key.strip():
            return options, f"Line {number} is not KEY=VALUE: {stripped[:60]}"
        options[key.strip()] = value.strip()
    return options, None


class UriDialog(QDialog):
    """``uriDialog``: ``uriEdit``, ``storageOptionsEdit`` and ``uriProblem``."""

    def __init__(
        self, parent: QWidget | None = None, uri: str = "", options: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("uriDialog")
        self.setWindowTitle("Open a URI")
        intro = QLabel(
            "Open a LanceDB database on object storage (S3 or S3-compatible, GCS, Azure), read-only and "
            "without registering it. Credentials can also come from the usual variables (AWS_ACCESS_KEY_ID, "
            "…). Secret options (keys, tokens) are never kept in the recent list."
        )
        intro.setWordWrap(True)
        self.uri_edit = QLineEdit(uri)
        self.uri_edit.setObjectName("uriEdit")
        self.uri_edit.setPlaceholderText("s3://bucket/prefix")
        self.options_edit = text_view("storageOptionsEdit", monospace=True)
        self.options_edit.setPlaceholderText(OPTIONS_PLACEHOLDER)
        self.options_edit.setPlainText("\n".join(f"{k}={v}" for k, v in (options or {}).items()))
        self.options_edit.setTabChangesFocus(True)
        self.problem = QLabel()
        self.problem.setObjectName("uriProblem")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: palette(highlight);")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("&URI:", self.uri_edit)
        form.addRow("&Storage options:", self.options_edit)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form, 1)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self.uri_edit.textChanged.connect(self._check)
        self.options_edit.textChanged.connect(self._check)
        self._check()
        self.resize(560, 320)

    def uri(self) -> str:
        return self.uri_edit.text().strip()

    def storage_options(self) -> dict[str, str]:
        return parse_options(self.options_edit.toPlainText())[0]

    def _check(self) -> None:
        _options, problem = parse_options(self.options_edit.toPlainText())
        uri = self.uri()
        if problem is None and uri and "://" not in uri:
            problem = "A URI names its storage, e.g. s3://bucket/prefix (File ▸ Open Folder… opens a folder)."
        self.problem.setText(problem or "")
        self.problem.setVisible(problem is not None)
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Open)
        ok.setEnabled(bool(uri) and problem is None)

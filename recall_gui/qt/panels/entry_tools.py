"""Under the entry detail: what to do with the selected entry ("More like this", "Add as golden check")
and whether the agent would see it for the current query ("Would the agent see this?")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction, QKeySequence, QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from recall_gui.qt.panels.status_note import StatusNote, Tone
from recall_gui.qt.widgets import ElidedLabel, push_button

if TYPE_CHECKING:
    from recall_gui.core.embedders import ModelInfo
    from recall_gui.core.search import AgentVerdict, Visibility

MORE_LIKE_TIP = "Search this database with the selected entry's stored vector (Ctrl+M)"
GOLDEN_TIP = (
    "Save the last query with the selected rows as the ids it must return, as a golden check (Ctrl+G)"
)
REVIEW_TIP = "Review this database entry by entry on the Review page, from the selected entry (Ctrl+Shift+R)"
NO_QUERY = "Search for something first: this says where the selected entry ranks for that query."


def _quote(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return f"“{line if len(line) <= limit else line[: limit - 1] + '…'}”"


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number:,}{suffix}"


def _place(v: Visibility) -> tuple[str, str]:
    """Yes or No, and where the entry is for the search ``v`` answers."""
    asked = f"for {_quote(v.query)} (limit {v.limit})"
    metric = "squared L2" if v.metric == "l2" else v.metric
    distance = "" if v.distance is None else f", at distance {v.distance:.4f} ({metric})"
    of = f" of {v.rows:,}" if v.rows else ""
    cut = ""
    if v.cutoff is not None and v.margin is not None:
        if v.margin >= 0:
            cut = f"; the last result is at {v.cutoff:.4f}, so it has {v.margin:.4f} to spare"
        else:
            places = v.places_behind
            up = f", {places:,} place{'s' if places != 1 else ''} up," if places else ""
            cut = (
                f"; the last result is at {v.cutoff:.4f}: it must come {-v.margin:.4f} nearer{up} to make it"
            )
    elif v.in_results:
        cut = "; the agent gets every row for this query (fewer than the limit)"
    note = f" Note: {v.note}." if v.note else ""
    if v.in_results:
        return "Yes", f"{asked} it is {_ordinal(v.result_rank or 0)} of the results{distance}{cut}.{note}"
    if v.rank is not None:
        return "No", f"{asked} it ranks {_ordinal(v.rank)}{of}{distance}{cut}.{note}"
    return "No", f"not {asked}.{note}"


def _in_short(v: Visibility | None, limit: int) -> str:
    """The agent's answer in a few words, for the line that says how the view differs."""
    if v is None:
        return "not in its table"
    if v.in_results:
        return f"{_ordinal(v.result_rank or 0)} of its {limit:,}"
    if v.rank is not None:
        return f"rank {v.rank:,}, not among its {limit:,}"
    return f"not among its {limit:,}"


def _view_short(v: Visibility) -> str:
    if v.in_results:
        return f"{_ordinal(v.result_rank or 0)} of the results (limit {v.limit:,})"
    if v.rank is not None:
        return f"it ranks {_ordinal(v.rank)}, outside the results (limit {v.limit:,})"
    return f"not ranked ({v.note})" if v.note else "not ranked"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def describe(verdict: AgentVerdict, model: ModelInfo | None = None) -> tuple[str, Tone]:
    """The answer to "would the agent see this?" in words, computed in the agent's scope, with how the
    user's view differs and the view's own answer beside it; and how good the news is. ``model``: what
    embedded the query here (a stand-in is said: the agent's own model may rank otherwise)."""
    scope, agent = verdict.scope, verdict.agent
    others = verdict.differences if scope.searched else verdict.differences[1:]
    if agent is None:
        text = f"Would the agent see this? No: {verdict.missing or 'the entry is not in its table'}."
        tone: Tone = "bad"
    elif not scope.searched:
        reason = verdict.differences[0] if verdict.differences else "no agent searches it"
        text = f"Would the agent see this? No: {reason}. If one did, {_place(agent)[1]}"
        tone = "bad"
    else:
        answer, place = _place(agent)
        text = f"Would the agent see this? {answer}: {place}"
        tone = "good" if answer == "Yes" else "bad"
    if others:
        text += f"\n{_capital('; '.join(others))}: {_in_short(agent, scope.limit)}."
    if verdict.view is not None:
        text += f" In your view: {_view_short(verdict.view)}."
    if model is not None and not model.exact:
        text += (
            f"\nRanked with a stand-in for {model.name} here: the agent's own model may rank it otherwise."
        )
    return text, tone


class EntryTools(QWidget):
    """``moreLikeButton``, ``addGoldenButton`` and ``visibilityNote``; the actions are also in the menus."""

    moreLikeRequested = Signal()
    addGoldenRequested = Signal()
    reviewRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("entryTools")
        self.more_like_action = QAction("&More Like This", self)
        self.more_like_action.setShortcut(QKeySequence("Ctrl+M"))
        self.more_like_action.setStatusTip(MORE_LIKE_TIP)
        self.more_like_action.triggered.connect(self.moreLikeRequested)
        self.add_golden_action = QAction("Add as &Golden Check", self)
        self.add_golden_action.setShortcut(QKeySequence("Ctrl+G"))
        self.add_golden_action.setStatusTip(GOLDEN_TIP)
        self.add_golden_action.triggered.connect(self.addGoldenRequested)
        self.review_action = QAction("&Review From Here", self)
        self.review_action.setShortcut(QKeySequence("Ctrl+Shift+R"))
        self.review_action.setStatusTip(REVIEW_TIP)
        self.review_action.triggered.connect(self.reviewRequested)

        self.more_like_button = push_button("More like this", "moreLikeButton", MORE_LIKE_TIP)
        self.more_like_button.clicked.connect(self.more_like_action.trigger)
        self.add_golden_button = push_button("Add as golden check", "addGoldenButton", GOLDEN_TIP)
        self.add_golden_button.clicked.connect(self.add_golden_action.trigger)
        self.review_button = push_button("Review from here", "reviewFromHereButton", REVIEW_TIP)
        self.review_button.clicked.connect(self.review_action.trigger)
        #: Beside the buttons: that a golden check was just added (the status bar is far from them).
        self.golden_added = ElidedLabel()
        self.golden_added.setObjectName("goldenAdded")
        self.note = StatusNote("visibilityNote")
        self.note.setToolTip("Would the agent see this? Its rank for the query, and the limit's cut-off")
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.more_like_button)
        buttons.addWidget(self.add_golden_button)
        buttons.addWidget(self.review_button)
        buttons.addWidget(self.golden_added, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.note)
        layout.addLayout(buttons)
        self.set_enabled(more_like=False, golden=False)
        self.show_verdict(NO_QUERY, "neutral")

    def set_enabled(self, *, more_like: bool, golden: bool, golden_tip: str = GOLDEN_TIP) -> None:
        self.more_like_action.setEnabled(more_like)
        self.more_like_button.setEnabled(more_like)
        self.add_golden_action.setEnabled(golden)
        self.add_golden_button.setEnabled(golden)
        self.add_golden_button.setToolTip(golden_tip)
        self.review_action.setEnabled(more_like)  # an entry of the table is selected
        self.review_button.setEnabled(more_like)

    def show_verdict(self, text: str, tone: Tone) -> None:
        """The verdict for the entry selected now (a check added for the one before is no longer said)."""
        self.golden_added.clear()
        self.note.show_note(text, tone)
        self.note.setVisible(True)
        self._fit_height()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_height()

    def _fit_height(self) -> None:
        """As tall as the verdict's lines at this width and the buttons: the splitter the tools sit in
        does not ask a widget's height for its width, and cut the buttons off in a narrow window."""
        layout = self.layout()
        needed = layout.totalHeightForWidth(self.width()) if layout and layout.hasHeightForWidth() else -1
        if needed > 0 and needed != self.minimumHeight():
            self.setMinimumHeight(needed)

    def confirm_golden(self, text: str, details: str) -> None:
        """Say beside the button that a golden check was added (``details``: the whole of it, as a tip)."""
        self.golden_added.setText(f"✓ {text}")
        self.golden_added.setToolTip(details)

    def show_visibility(self, verdict: AgentVerdict, model: ModelInfo | None = None) -> None:
        self.show_verdict(*describe(verdict, model))

    def clear(self) -> None:
        self.note.setVisible(False)

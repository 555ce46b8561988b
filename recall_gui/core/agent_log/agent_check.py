"""Does what an agent receives match what the user sees? The verdicts behind the window's Agent view.

Two comparisons, both between something an MCP client received from the real server and the window's
own idea of it: the tool description (served vs. the description panel's editor), and a search (the
``tools/call`` payload vs. the window's own search for the same arguments, by result ids and order; where
the table's ids repeat, by each result's id and content).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from recall_gui.core.storage.content_identity import content_sha256
from recall_gui.core.storage.entry_names import IdRepeats

if TYPE_CHECKING:
    from recall_gui.core.embedders.base import ModelInfo


class DescriptionVerdict(Enum):
    """How the served description relates to the one the editor shows."""

    #: The server serves exactly the description the editor shows.
    SAME = "same"
    #: The editor holds edits that are not saved, so the server cannot serve them yet.
    UNSAVED = "unsaved"
    #: Nothing is unsaved, yet the server serves another text (another program's change, another
    #: config dir, or a change the server has not been asked about yet).
    DIFFERENT = "different"


def judge_description(served: str, shown: str, *, unsaved: bool) -> DescriptionVerdict:
    """Equal texts are :attr:`~DescriptionVerdict.SAME` whatever the editor's state; otherwise unsaved
    edits explain the difference, or nothing does."""
    if served == shown:
        return DescriptionVerdict.SAME
    return DescriptionVerdict.UNSAVED if unsaved else DescriptionVerdict.DIFFERENT


def result_ids(payload_text: str, repeats: IdRepeats | None = None) -> tuple[str, ...] | None:
    """The ids of a ``recall_search`` answer (``{"query", "results": [{"id", "content"}]}``), in order
    (``content·3f2a9c1e`` for an id ``repeats`` shares); ``None`` when the text is not such an answer."""
    shared = repeats or IdRepeats()
    try:
        data = json.loads(payload_text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        return None
    ids = []
    for result in data["results"]:
        if not isinstance(result, dict) or not isinstance(result.get("id"), str):
            return None
        entry_id, content = result["id"], result.get("content")
        if shared.is_shared(entry_id) and isinstance(content, str):
            entry_id = shared.label(entry_id, content_sha256(content))
        ids.append(entry_id)
    return tuple(ids)


@dataclass(frozen=True)
class WindowAnswer:
    """The window's own search for the same arguments (the agent's scope: the latest version, no
    filter): its ids in order, or the message it failed with; and how the knowledge page's view differs
    from that scope (empty: it shows the agent's scope)."""

    ids: tuple[str, ...] | None = None
    error: str | None = None
    view_differences: tuple[str, ...] = ()
    #: What embedded the window's query (the server embeds with the same): a stand-in is said.
    model: ModelInfo | None = None
    #: The ids the table's rows share: those results are compared (and named) by their contents.
    repeats: IdRepeats = field(default_factory=IdRepeats)


@dataclass(frozen=True)
class PayloadComparison:
    """Whether the agent's payload and the window's answer agree, in one sentence a user can read."""

    matches: bool
    summary: str


def _count(n: int) -> str:
    return f"{n} result{'' if n == 1 else 's'}"


def _ids(ids: tuple[str, ...], most: int = 5) -> str:
    shown = ", ".join(ids[:most])
    return shown + (f", … ({len(ids)} in all)" if len(ids) > most else "") if ids else "no results"


def compare_payload(payload_text: str, is_error: bool, window: WindowAnswer) -> PayloadComparison:
    """Compare what the agent got with what the window finds in the agent's scope: same ids in the same
    order, or why not. When the knowledge page shows another view (a filter, an older version), the
    verdict names the scope it compared in and says how the page's view differs."""
    if not window.view_differences:
        return _with_model(
            _compare(payload_text, is_error, window, "the window", "the window's search"), window
        )
    scoped = "the window's search as the agent runs it"
    comparison = _compare(payload_text, is_error, window, scoped, scoped)
    texts = "; ".join(window.view_differences)
    return _with_model(
        PayloadComparison(
            comparison.matches, f"{comparison.summary} The knowledge page shows another view: {texts}."
        ),
        window,
    )


def _with_model(comparison: PayloadComparison, window: WindowAnswer) -> PayloadComparison:
    """A stand-in said: the server here embeds as the window does, cosh's agent with its own model."""
    model = window.model
    if model is None or model.exact:
        return comparison
    return PayloadComparison(
        comparison.matches,
        f"{comparison.summary} Both embed with a stand-in for {model.name} here ({model.source}): cosh's "
        f"agent, with its own model ({model.stands_in_for}), may get other results.",
    )


def _compare(
    payload_text: str, is_error: bool, window: WindowAnswer, name: str, search: str
) -> PayloadComparison:
    """The comparison, ``name`` and ``search`` saying what the window's answer is."""
    if is_error:
        if window.error is not None:
            same = window.error == payload_text
            return PayloadComparison(
                same,
                "Both fail with the same message."
                if same
                else f"Both fail, with different messages: {name} says “{window.error}”.",
            )
        found = _count(len(window.ids or ()))
        return PayloadComparison(False, f"The agent gets an error, while {name} finds {found}.")
    agent_ids = result_ids(payload_text, window.repeats)
    if agent_ids is None:
        return PayloadComparison(False, "The payload is not recall_search's JSON answer: nothing to compare.")
    if window.error is not None:
        return PayloadComparison(
            False, f"The agent gets {_count(len(agent_ids))}, while {search} fails: {window.error}"
        )
    window_ids = window.ids or ()
    if agent_ids == window_ids:
        return PayloadComparison(
            True, f"Matches {name}: the same {_count(len(agent_ids))}, in the same order."
        )
    if sorted(agent_ids) == sorted(window_ids):
        return PayloadComparison(False, f"Differs from {name}: the same results in another order.")
    rank = next(
        (n for n, (mine, theirs) in enumerate(zip(agent_ids, window_ids, strict=False)) if mine != theirs),
        min(len(agent_ids), len(window_ids)),
    )
    return PayloadComparison(
        False,
        f"Differs from {name} from rank {rank + 1} on: the agent gets {_ids(agent_ids)}; "
        f"{name} shows {_ids(window_ids)}.",
    )

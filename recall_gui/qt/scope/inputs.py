"""What the user asked for on the knowledge page, read from its widgets when an operation starts."""

from __future__ import annotations

from typing import NamedTuple

from recall_gui.core.base import DEFAULT_LIMIT


class Inputs(NamedTuple):
    """The query, the limit, the text filter and the metadata filter, as typed."""

    query: str = ""
    limit: int = DEFAULT_LIMIT
    filter_text: str = ""
    #: The metadata filter (a LanceDB SQL predicate); empty for none.
    where: str = ""


EMPTY_INPUTS = Inputs()

"""The orders a review walks in, by name and in words: light to import (the window lists them at once;
the queues themselves are :mod:`.queue`'s)."""

from __future__ import annotations

from enum import StrEnum

from recall_gui.core.base.errors import InvalidInputError


class Order(StrEnum):
    TABLE = "table"
    NOT_REVIEWED = "not-reviewed"
    CHANGED = "changed"
    MOST_GIVEN = "most-given"
    UNREACHABLE = "unreachable"
    NEAR_COPIES = "near-copies"
    FILTER = "filter"


ORDER_LABELS = {
    Order.TABLE: "table order",
    Order.NOT_REVIEWED: "not reviewed yet",
    Order.CHANGED: "changed since reviewed",
    Order.MOST_GIVEN: "most often given to agents",
    Order.UNREACHABLE: "unreachable (reach)",
    Order.NEAR_COPIES: "near-copies (duplicates)",
    Order.FILTER: "a filter",
}


def parse_order(text: str) -> Order:
    try:
        return Order(text)
    except ValueError:
        names = ", ".join(order.value for order in Order)
        raise InvalidInputError(f"{text!r} is not an order", hint=f"Orders: {names}.") from None

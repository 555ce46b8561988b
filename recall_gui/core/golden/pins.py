"""The version a pinned golden check runs on: its number, or its LanceDB tag's, if still on disk.

A pin names a version that may have been cleaned up since, or a tag deleted or never made: the check then
cannot run, and says so with the versions (or tags) there are, instead of failing the whole run.
"""

from __future__ import annotations

from typing import Any

from recall_gui.core.base.errors import InvalidInputError, RecallError
from recall_gui.core.golden.golden import VersionPin
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.session.session import Session
from recall_gui.core.storage.lance_calls import bounded
from recall_gui.core.tables.versions import describe_numbers, list_versions

_LIST_HINT = "List them with `recall-gui versions --db NAME`, then pin one of them or remove the pin."


async def pinned_version(session: Session, entry: DatabaseEntry, pin: VersionPin) -> int:
    """The version ``pin`` names in ``entry``'s table, or an :class:`InvalidInputError` saying that it is
    not on disk (cleaned up, never written) or that no version has the tag. Only a pin that cannot be
    opened lists the table's versions (LanceDB reads every manifest for that)."""
    table = entry.target.table_name
    if pin.tag is None:
        assert pin.version is not None
        number = pin.version
    else:
        opened: Any = (await session.tables.open(entry.target)).table
        tagged: dict[str, Any] = await bounded(opened.tags.list(), f'listing the tags of "{table}"')
        if pin.tag not in tagged:
            known = ", ".join(f'"{tag}"' for tag in sorted(tagged)) or "none"
            raise InvalidInputError(
                f'tag: table "{table}" has no tag "{pin.tag}" (its tags: {known})', hint=_LIST_HINT
            )
        number = int(tagged[pin.tag]["version"])
    try:
        await session.tables.open(entry.target.at(number))
    except RecallError:
        versions = await list_versions(session, entry.target)
        if any(version.version == number for version in versions):
            raise  # it is there: opening it failed for another reason, which says why
        field = "version" if pin.tag is None else "tag"
        raise InvalidInputError(
            f'{field}: table "{table}" no longer has version {number} on disk (cleaned up, or never '
            f"written; its versions: {describe_numbers(versions)})",
            hint=_LIST_HINT,
        ) from None
    return number

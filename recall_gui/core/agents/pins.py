"""The version a pinned golden check runs on: its number, or its LanceDB tag's, if still on disk.

A pin names a version that may have been cleaned up since, or a tag deleted or never made: the check then
cannot run, and says so with the versions (or tags) there are, instead of failing the whole run.
"""

from __future__ import annotations

from recall_gui.core.agents.golden import VersionPin
from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.registry.registry import DatabaseEntry
from recall_gui.core.session.session import Session
from recall_gui.core.tables.versions import describe_numbers, list_versions

_LIST_HINT = "List them with `recall-gui versions --db NAME`, then pin one of them or remove the pin."


async def pinned_version(session: Session, entry: DatabaseEntry, pin: VersionPin) -> int:
    """The version ``pin`` names in ``entry``'s table, or an :class:`InvalidInputError` saying that it is
    not on disk (cleaned up, never written) or that no version has the tag."""
    versions = await list_versions(session, entry.target)
    table = entry.target.table_name
    if pin.tag is not None:
        tagged = {tag: version.version for version in versions for tag in version.tags}
        if pin.tag not in tagged:
            known = ", ".join(f'"{tag}"' for tag in sorted(tagged)) or "none"
            raise InvalidInputError(
                f'tag: table "{table}" has no tag "{pin.tag}" (its tags: {known})', hint=_LIST_HINT
            )
        return tagged[pin.tag]
    assert pin.version is not None
    if not any(version.version == pin.version for version in versions):
        raise InvalidInputError(
            f'version: table "{table}" no longer has version {pin.version} on disk (cleaned up, or '
            f"never written; its versions: {describe_numbers(versions)})",
            hint=_LIST_HINT,
        )
    return pin.version

"""Writing media files whole or not at all, and telling a full disk from other failures.

Django's FileSystemStorage leaves a truncated file behind when a write fails halfway (a full
disk: ENOSPC on a write or on the final flush), and its caller learns only an OSError. Uploads
and match logs are written through `storage_save_whole` instead: the partial file is removed,
and a full disk is raised as StorageFull, which the web answers as 507 with words that say it
is the server's trouble, and which a match survives by keeping its log in the database.
"""

from __future__ import annotations

import errno
import logging

from django.core.files.base import ContentFile
from django.core.files.storage import Storage
from django.db.models.fields.files import FieldFile

logger = logging.getLogger(__name__)

NO_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
"""A write refused for lack of room: the disk (or the NFS export) is full, or a quota is."""

STORAGE_FULL_MESSAGE = (
    "The server is out of storage space, so your upload was not stored. This is not a "
    "problem with your bot: please try again later."
)


class StorageFull(Exception):
    """The media storage has no room for a file. The server's fault, not the request's: the
    same write succeeds once space is freed."""

    def __init__(self, message: str = STORAGE_FULL_MESSAGE) -> None:
        super().__init__(message)


def is_no_space(exc: BaseException) -> bool:
    """Whether `exc` is a write refused for lack of room."""
    return isinstance(exc, OSError) and exc.errno in NO_SPACE_ERRNOS


def storage_save_whole(field_file: FieldFile, name: str, data: bytes) -> None:
    """Store `data` as `field_file`'s file (its field's `upload_to` turns `name` into the path)
    and point the model instance at it; the instance is not saved.

    On any failure nothing is left behind: the partly written file is deleted and the error
    propagates, a full disk as StorageFull (chained to the OSError). The name is chosen before
    writing so that the partial file can be found: the ladder's paths are unique by
    construction (a version's number under its bot's lock, a match's id under its row lock),
    so no other writer takes the same name in between.
    """
    field = field_file.field
    storage: Storage = field_file.storage
    wanted = field.generate_filename(field_file.instance, name)
    target = storage.get_available_name(wanted, max_length=field.max_length)
    try:
        stored = storage.save(target, ContentFile(data), max_length=field.max_length)
    except Exception as exc:
        _remove_partial(storage, target)
        if is_no_space(exc):
            raise StorageFull() from exc
        raise
    setattr(field_file.instance, field.attname, stored)


def _remove_partial(storage: Storage, name: str) -> None:
    """Delete what a failed write left at `name`; a failure to delete is logged, not raised
    (the caller's own error is the one that matters)."""
    try:
        if storage.exists(name):
            storage.delete(name)
    except Exception:
        logger.exception("could not remove the partly written file %s", name)


def storage_save_addressed(field_file: FieldFile, data: bytes) -> None:
    """Store `data` at the path its field's `upload_to` derives from the instance (a
    content-addressed path: the same bytes, the same name), unless a file is there already,
    which then holds these very bytes; point the instance at it. Whole or not at all, like
    `storage_save_whole`."""
    field = field_file.field
    storage: Storage = field_file.storage
    name = field.generate_filename(field_file.instance, "artifact")
    if not storage.exists(name):
        storage_save_whole(field_file, "artifact", data)
        return
    setattr(field_file.instance, field.attname, name)

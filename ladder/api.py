"""What every REST API of the ladder shares: the schema class and the exception handler.

The APIs themselves live in each app's `apis.py`: one class per operation, each with its own
input and output serializers, calling one selector or service.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error
from rest_framework.views import exception_handler as drf_exception_handler

from ladder.storage import STORAGE_FULL_MESSAGE, StorageFull


class AutoSchema(SpectacularAutoSchema):
    """Names schema components after the API that holds the serializer.

    Every API nests its own `InputSerializer` and `OutputSerializer`; drf-spectacular would
    name all of them `Input`/`Output` and merge them. `BotListApi.OutputSerializer` becomes
    `BotListOutput`, `MatchDetailApi.OutputSerializer.SeatSerializer` becomes `MatchDetailSeat`.
    """

    def get_serializer_name(self, serializer: Any, direction: Any) -> str:
        parts = type(serializer).__qualname__.split(".")
        if len(parts) > 1:
            return parts[0].removesuffix("Api") + parts[-1].removesuffix("Serializer")
        return str(super().get_serializer_name(serializer, direction))


class InsufficientStorage(exceptions.APIException):
    """507: the server had no room to store what the request sent (not the client's fault)."""

    status_code = 507
    default_detail = STORAGE_FULL_MESSAGE
    default_code = "insufficient_storage"


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, plus: Django's ValidationError from a service is a 400 like a
    serializer's, with the same shape (`{"field": ["message"]}` or `{"non_field_errors": ...}`);
    StorageFull (the media disk is full) is a 507 that says so, not a bare 500.
    """
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(as_serializer_error(exc))
    if isinstance(exc, StorageFull):
        exc = InsufficientStorage(str(exc))
    return drf_exception_handler(exc, context)

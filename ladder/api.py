"""What every REST API of the ladder shares: the schema class and the exception handler.

The APIs themselves live in each app's `apis.py`: one class per operation, each with its own
input and output serializers, calling one selector or service.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error
from rest_framework.views import exception_handler as drf_exception_handler

from ladder.converters import MAX_ID
from ladder.storage import STORAGE_FULL_MESSAGE, StorageFull

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": '`{"detail": "why"}`, or for a refused input the messages by field: '
    '`{"field": ["why"]}` (`non_field_errors` for the input as a whole).',
    "additionalProperties": {},
}
"""Every error the API answers is a JSON object of this shape (DRF's own)."""

ERROR_DESCRIPTIONS = {
    "400": "The request is malformed or refused; the body says which field and why.",
    "401": "Not signed in, or the token is wrong: send `Authorization: Token <key>` (or "
    "`Bearer <key>`).",
    "403": "Signed in, but not allowed to do this (not the owner, not an organiser), or a "
    "session request without its CSRF token.",
    "404": "No such object (or not yours to see), or a page number past the last page.",
}
"""What the errors every operation may answer mean, for the operations that may answer them."""

NO_NUL_PATTERN = r"^[^\x00]*$"
"""No NUL character: DRF refuses one in every string field (ProhibitNullCharactersValidator:
PostgreSQL cannot store it), and the schema says so, or a NUL would be schema-valid data
refused."""


class AutoSchema(SpectacularAutoSchema):
    """Names schema components after the API that holds the serializer, and lists the errors
    each operation may answer.

    Every API nests its own `InputSerializer` and `OutputSerializer`; drf-spectacular would
    name all of them `Input`/`Output` and merge them. `BotListApi.OutputSerializer` becomes
    `BotListOutput`, `MatchDetailApi.OutputSerializer.SeatSerializer` becomes `MatchDetailSeat`.

    drf-spectacular lists only the success response; a client reading the schema would not
    know that a missing field is a 400 or an unknown id a 404, and tools that check the API
    against its schema (tests/ladder/site/test_schemathesis.py) call every other status a lie.
    `error_codes` says which errors an operation can answer, from its shape.
    """

    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation: dict[str, Any] | None = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        responses = operation.setdefault("responses", {})
        for code in error_codes(
            method=self.method,
            path=self.path,
            parameters=operation.get("parameters", []),
            has_body="requestBody" in operation,
            secured=any(operation.get("security", [])),
        ):
            responses.setdefault(code, {"description": ERROR_DESCRIPTIONS[code]})
        for code, response in responses.items():
            if code >= "400" and not response.get("content"):
                response["content"] = {"application/json": {"schema": ERROR_SCHEMA}}
        return operation

    def map_parsers(self) -> list[Any]:
        """A body is offered under one content type: JSON (an upload names multipart itself).

        The APIs parse forms too (DRF's default parsers), but a schema that offers every body
        three ways makes generated clients offer three bodies per operation, which
        openapi-python-client turns into code that does not import; JSON is what every client
        sends."""
        parsers: list[Any] = super().map_parsers()
        return ["application/json"] if "application/json" in parsers else parsers

    def _map_serializer_field(
        self, field: Any, direction: Any, bypass_extensions: bool = False
    ) -> dict[str, Any]:
        """A string the client sends, without a pattern of its own, gets NO_NUL_PATTERN: the
        field refuses a NUL (400, naming the field), so the schema must not allow one."""
        mapped = super()._map_serializer_field  # drf-spectacular's own, untyped
        schema: dict[str, Any] = mapped(field, direction, bypass_extensions)  # type: ignore[no-untyped-call]
        if (
            direction == "request"
            and isinstance(field, serializers.CharField)
            and schema.get("type") == "string"
            and not {"pattern", "enum", "format"} & schema.keys()
        ):
            schema = {**schema, "pattern": NO_NUL_PATTERN}
        return schema

    def get_serializer_name(self, serializer: Any, direction: Any) -> str:
        parts = type(serializer).__qualname__.split(".")
        if len(parts) > 1:
            return parts[0].removesuffix("Api") + parts[-1].removesuffix("Serializer")
        return str(super().get_serializer_name(serializer, direction))


class StrictCharField(serializers.CharField):
    """A string, and only a string. DRF's CharField takes `12` or `1.5` for "12" and "1.5";
    the schema says `string`, so a number there is a malformed request (400), as the schema
    promises (tests/ladder/site/test_schemathesis.py sends such bodies)."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        value: str = super().to_internal_value(data)
        return value


class IdField(serializers.IntegerField):
    """A row's id (or a version's number) sent in a query or a body: 1 to MAX_ID, as the schema
    then states. An unbounded integer reached the database, and SQLite (`make run`'s) raised
    OverflowError past 2**63 - 1: a 500 where the request was the client's mistake."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("min_value", 1)
        super().__init__(max_value=MAX_ID, **kwargs)


class QuerySerializer(serializers.Serializer):
    """A serializer of query parameters that refuses an empty value (`?ruleset=`) instead of
    reading it as absent: the schema says each parameter, when sent, is at least one
    character, and a client that sends an empty one has a bug worth hearing about."""

    def to_internal_value(self, data: Any) -> Any:
        blank: dict[str, Any] = {
            str(name): ["May not be empty; leave the parameter out instead."]
            for name in self.fields
            if hasattr(data, "getlist") and "" in data.getlist(name)
        }
        if blank:
            raise exceptions.ValidationError(blank)
        return super().to_internal_value(data)


def error_codes(
    *, method: str, path: str, parameters: list[dict[str, Any]], has_body: bool, secured: bool
) -> list[str]:
    """The errors an operation can answer whatever it does, from its shape: 400 when it reads
    query parameters or a body; 401 when it takes credentials (a wrong token is refused
    anywhere); 403 when it changes something for a signed-in user (permissions, and CSRF for a
    session); 404 when its path names an object or it has pages."""
    codes = []
    if has_body or any(p.get("in") == "query" for p in parameters):
        codes.append("400")
    if secured:
        codes.append("401")
        if method not in ("GET", "HEAD", "OPTIONS"):
            codes.append("403")
    if "{" in path or any(p.get("name") == "page" for p in parameters):
        codes.append("404")
    return codes


class Conflict(exceptions.APIException):
    """409: the request clashes with what exists (a bot name its owner already uses)."""

    status_code = 409
    default_detail = "This clashes with something that exists."
    default_code = "conflict"


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


def is_api(request: HttpRequest) -> bool:
    """Whether `request` is for the REST API, whose every answer, errors included, is JSON."""
    return request.path.startswith("/api/")


@csrf_exempt  # a POST to no API is a 404, whatever its cookies (DRF's views are exempt too)
def api_not_found(request: HttpRequest, rest: str = "") -> JsonResponse:
    """The last pattern under /api/: a path no API has (`/api/bots/abc/`, a typo) is a JSON
    404 like every other API error, not Django's HTML page."""
    return JsonResponse({"detail": f"No API at {request.path}."}, status=404)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: JSON under /api/, the site's 404 page elsewhere."""
    if is_api(request):
        return api_not_found(request)
    return defaults.page_not_found(request, exception)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: a JSON 403 under /api/ (a session-signed request without its CSRF
    token), Django's page elsewhere."""
    if is_api(request):
        detail = f"CSRF check failed ({reason}): send X-CSRFToken, or use a token instead."
        return JsonResponse({"detail": detail}, status=403)
    from django.views.csrf import csrf_failure as django_csrf_failure

    return django_csrf_failure(request, reason)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: JSON under /api/ (a client parses it like any other error), the site's 500
    page elsewhere."""
    if is_api(request):
        return JsonResponse(
            {"detail": "Server error: the site's fault, not the request's."}, status=500
        )
    return defaults.server_error(request)

"""The API's pagination (DEFAULT_PAGINATION_CLASS). A module of its own: DRF imports it while
`rest_framework.generics` loads, before drf-spectacular (which ladder/api.py needs) can be."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.utils.functional import cached_property
from rest_framework import exceptions
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination, PageNumberPagination
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param


class Pagination(PageNumberPagination):
    """DRF's page numbers, with `?page=` given once and not empty: DRF would read the last of
    several, or an empty one as page 1, where the schema says one integer."""

    def paginate_queryset(self, queryset: Any, request: Any, view: Any = None) -> Any:
        values = request.query_params.getlist(self.page_query_param)
        if len(values) > 1 or values == [""]:
            raise exceptions.ValidationError({self.page_query_param: ["Give one page number."]})
        return super().paginate_queryset(queryset, request, view)


ESTIMATE_FROM = 10_000
"""Past this many rows a list's `count` is PostgreSQL's estimate, not a COUNT."""
LEGACY_PAGES = 200
"""`?page=` is still served on the keyset lists, up to this page: offsets cost their depth."""


def count_estimated(queryset: Any, *, exact_below: int = ESTIMATE_FROM) -> tuple[int, bool]:
    """(rows, exact): the rows of `queryset`, counted when fewer than `exact_below`, else the
    planner's estimate (EXPLAIN: no rows read), so that no request counts millions of rows.

    The planner's guess comes first: past `exact_below` it is trusted without counting; under
    it the rows are counted, but never more than `exact_below` + 1 of them.
    """
    from django.db import connection

    if connection.vendor == "postgresql":
        sql, params = queryset.order_by().values("pk").query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
            plan = cursor.fetchone()[0]
        if isinstance(plan, str):
            import json

            plan = json.loads(plan)
        estimate = int(plan[0]["Plan"]["Plan Rows"])
        if estimate > exact_below:
            return estimate, False
    counted = int(queryset.order_by()[: exact_below + 1].count())
    if counted > exact_below:
        return counted, False
    return counted, True


class KeysetPagination(CursorPagination):
    """Keyset (cursor) pages, newest first by id: a page costs the same at any depth (an index
    range from the cursor's id, never an OFFSET), and a row inserted meanwhile never shifts
    the next page (DRF's CursorPagination; the cursor is opaque, follow `next`).

    The response keeps the page-number lists' fields: `count` (an estimate past
    ESTIMATE_FROM rows, with `count_exact` false), `next`, `previous`, `results`. `?page=N`
    is still served, by offset, up to LEGACY_PAGES (older clients walk pages by number); the
    cursor links go anywhere.
    """

    ordering = ("-id",)
    page_size = 50

    def paginate_queryset(self, queryset: Any, request: Any, view: Any = None) -> Any:
        self.count, self.count_exact = count_estimated(queryset)
        pages = request.query_params.getlist("page")
        if pages and not request.query_params.get(self.cursor_query_param):
            return self._legacy(queryset, request, pages)
        self.legacy_page: int | None = None
        cursor = self.decode_cursor(request)
        if cursor is not None and cursor.position is not None:
            # The keys are ids: anything else in a cursor is a client's invention.
            position = str(cursor.position)  # a string once decoded (DRF's stubs say int)
            if not position.isdigit() or len(position) > 18:
                raise NotFound(self.invalid_cursor_message)
        return super().paginate_queryset(queryset, request, view)

    def _legacy(self, queryset: Any, request: Any, pages: list[str]) -> list[Any]:
        if len(pages) > 1 or not pages[0].isdigit() or int(pages[0]) < 1:
            raise exceptions.ValidationError({"page": ["Give one page number."]})
        number = int(pages[0])
        if number > LEGACY_PAGES:
            raise exceptions.ValidationError(
                {
                    "page": [
                        f"Pages by number go up to {LEGACY_PAGES}; follow the `next` links "
                        "(cursors) to go further."
                    ]
                }
            )
        self.base_url = request.build_absolute_uri()
        self.request = request
        size = self.get_page_size(request) or self.page_size
        start = (number - 1) * size
        rows = list(queryset.order_by(*self.ordering)[start : start + size + 1])
        if number > 1 and not rows:
            raise NotFound("Invalid page.")
        self.legacy_page = number
        self.legacy_more = len(rows) > size
        return rows[:size]

    def get_next_link(self) -> str | None:
        if self.legacy_page is not None:
            if not self.legacy_more:
                return None
            return replace_query_param(str(self.base_url), "page", self.legacy_page + 1)
        return super().get_next_link()

    def get_previous_link(self) -> str | None:
        if self.legacy_page is not None:
            if self.legacy_page == 1:
                return None
            return replace_query_param(str(self.base_url), "page", self.legacy_page - 1)
        return super().get_previous_link()

    def get_paginated_response(self, data: Any) -> Response:
        return Response(
            {
                "count": self.count,
                "count_exact": self.count_exact,
                "next": self.get_next_link(),
                "previous": self.get_previous_link(),
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        base = super().get_paginated_response_schema(schema)
        base["required"] = ["count", "count_exact", "next", "previous", "results"]
        base["properties"] = {
            "count": {
                "type": "integer",
                "description": f"Rows in the list: exact up to {ESTIMATE_FROM:,}, "
                "PostgreSQL's estimate past that (see count_exact).",
            },
            "count_exact": {"type": "boolean"},
            **base["properties"],
        }
        return base

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters: list[dict[str, Any]] = super().get_schema_operation_parameters(view)
        parameters.append(
            {
                "name": "page",
                "required": False,
                "in": "query",
                "description": f"A page number, 1 to {LEGACY_PAGES} (older clients); the "
                "cursor links reach every page.",
                "schema": {"type": "integer", "minimum": 1, "maximum": LEGACY_PAGES},
            }
        )
        return parameters


def keyset_cursor(*, position: int) -> str:
    """The `cursor` value of the page that starts just after id `position` (benchmarks and
    tests jump deep into a list with it; clients follow `next`)."""
    import base64
    from urllib.parse import urlencode

    return base64.b64encode(urlencode({"p": str(position)}).encode()).decode()


class EstimatedCountPaginator(Paginator):
    """Django's Paginator with `count_estimated`'s count: for the admin's list of matches,
    which would otherwise COUNT millions of rows for every page it shows."""

    @cached_property
    def count(self) -> int:
        return count_estimated(self.object_list)[0]

"""The API's pagination (DEFAULT_PAGINATION_CLASS). A module of its own: DRF imports it while
`rest_framework.generics` loads, before drf-spectacular (which ladder/api.py needs) can be."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.pagination import PageNumberPagination


class Pagination(PageNumberPagination):
    """DRF's page numbers, with `?page=` given once and not empty: DRF would read the last of
    several, or an empty one as page 1, where the schema says one integer."""

    def paginate_queryset(self, queryset: Any, request: Any, view: Any = None) -> Any:
        values = request.query_params.getlist(self.page_query_param)
        if len(values) > 1 or values == [""]:
            raise exceptions.ValidationError({self.page_query_param: ["Give one page number."]})
        return super().paginate_queryset(queryset, request, view)

"""Staff's view of seating circles: who is linked to whom and why, and the two actions that
change it (link the selected accounts into one circle; take each selected one out of its)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from ladder.accounts.models import Seating
from ladder.accounts.services import account_unlink, accounts_link


@admin.register(Seating)
class SeatingAdmin(admin.ModelAdmin):
    list_display = ["user", "circle", "house", "signup_network", "signed_up", "linked_reason"]
    list_filter = ["house"]
    search_fields = ["user__username", "signup_network"]
    ordering = ["circle", "user_id"]
    readonly_fields = ["user", "circle", "house", "signup_network", "signed_up", "linked_reason"]
    actions = ["link", "unlink"]

    @admin.action(description="Link the selected accounts (their bots never share a rated table)")
    def link(self, request: HttpRequest, queryset: QuerySet[Seating]) -> None:
        ids = list(queryset.values_list("user_id", flat=True))
        try:
            circle = accounts_link(user_ids=ids, reason=f"staff: {request.user}")
        except ValueError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        self.message_user(request, f"{len(ids)} accounts linked into circle {circle}.")

    @admin.action(description="Unlink the selected accounts (each a circle of its own)")
    def unlink(self, request: HttpRequest, queryset: QuerySet[Seating]) -> None:
        for user_id in queryset.values_list("user_id", flat=True):
            account_unlink(user_id=user_id, reason=f"unlinked by staff: {request.user}")
        self.message_user(request, "Unlinked.")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # rows are made by sign-ups and by the actions

"""REST API of notifications: an owner's webhooks (list, create, delete), a webhook's
deliveries, a test delivery.

Only the owner sees or touches a webhook: anyone else gets 404, as if it did not exist (ids of
webhooks are nobody else's business). One class per operation; `WebhooksApi` combines the two
of `/api/webhooks/`.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.accounts.selectors import signed_in_user
from ladder.api import Conflict, StrictCharField
from ladder.notifications.events import SUBSCRIBABLE
from ladder.notifications.models import Delivery, Webhook
from ladder.notifications.selectors import delivery_list, webhook_list
from ladder.notifications.services import (
    TooManyWebhooks,
    webhook_create,
    webhook_delete,
    webhook_ping,
)
from ladder.pagination import Pagination as PageNumberPagination


class WebhookSerializer(serializers.Serializer):
    """A webhook as every API shows it (the secret only when it is created)."""

    id = serializers.IntegerField()
    url = serializers.URLField()
    events = serializers.ListField(child=serializers.ChoiceField(choices=SUBSCRIBABLE))
    active = serializers.BooleanField()
    created = serializers.DateTimeField()


class DeliverySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    event = serializers.CharField()
    status = serializers.ChoiceField(choices=Delivery.Status.choices)
    attempts = serializers.IntegerField()
    last_status_code = serializers.IntegerField(allow_null=True)
    last_error = serializers.CharField()
    next_attempt = serializers.DateTimeField(
        allow_null=True, help_text="When the next attempt is due (pending only)."
    )
    created = serializers.DateTimeField()
    delivered = serializers.DateTimeField(allow_null=True)
    payload = serializers.JSONField()


def _own_webhook(request: Request, webhook_id: int) -> Webhook:
    return get_object_or_404(Webhook, pk=webhook_id, owner=request.user)


class WebhookListApi(APIView):
    """`GET /api/webhooks/`: the requesting user's webhooks, oldest first."""

    permission_classes = [IsAuthenticated]

    @extend_schema(operation_id="webhooks_list", responses=WebhookSerializer(many=True))
    def get(self, request: Request) -> Response:
        hooks = webhook_list(owner=signed_in_user(request))
        return Response(WebhookSerializer(hooks, many=True).data)


@extend_schema_field({"type": "string", "format": "uri", "minLength": 1, "maxLength": 500})
class UrlField(StrictCharField):
    """A webhook's URL, as text: what may be sent to is the guard's to say."""


class WebhookCreateApi(APIView):
    """`POST /api/webhooks/`: a new webhook. The answer holds its `secret`, shown only now.

    The URL must be http(s), without a user name or password, and resolve to public addresses
    only (unless the operator allows more); a refused URL is a 400 saying why. A host that does
    not resolve yet is taken, and checked again before every delivery.
    """

    permission_classes = [IsAuthenticated]

    class InputSerializer(serializers.Serializer):
        # Checked by the webhook guard (ladder/notifications/guard.py: http(s), no user name or
        # password, a public address), not by Django's URL pattern, which refuses host names
        # that a URI may have (a label of 63 characters, say).
        url = UrlField(max_length=500)
        events = serializers.ListField(
            child=serializers.ChoiceField(choices=SUBSCRIBABLE),
            required=False,
            help_text="The events to send; all of them if left out.",
        )

    class OutputSerializer(WebhookSerializer):
        secret = serializers.CharField(
            help_text="Signs every request (X-Grass-Signature). Store it now: it is not "
            "shown again."
        )

    @extend_schema(
        operation_id="webhooks_create",
        request=InputSerializer,
        responses={
            201: OutputSerializer,
            400: OpenApiResponse(
                description="A refused URL (one that resolves to a private address, say) or "
                "unknown events; says why. A host that does not resolve yet is taken."
            ),
            409: OpenApiResponse(description="You have as many webhooks as allowed already."),
        },
    )
    def post(self, request: Request) -> Response:
        data = WebhookCreateApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            hook = webhook_create(owner=signed_in_user(request), **data.validated_data)
        except TooManyWebhooks as exc:
            raise Conflict({"non_field_errors": exc.messages}) from None
        return Response(self.OutputSerializer(hook).data, status=status.HTTP_201_CREATED)


class WebhooksApi(WebhookListApi, WebhookCreateApi):
    """`/api/webhooks/`: `GET` lists, `POST` creates (the signed-in user's own)."""


class WebhookDeleteApi(APIView):
    """`DELETE /api/webhooks/{id}/`: delete the webhook and its deliveries; answers with what
    was deleted."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        responses={200: WebhookSerializer, 404: OpenApiResponse(description="Not yours.")}
    )
    def delete(self, request: Request, webhook_id: int) -> Response:
        hook = _own_webhook(request, webhook_id)
        body = WebhookSerializer(hook).data
        webhook_delete(webhook=hook)
        return Response(body)


class WebhookDeliveriesApi(APIView):
    """`GET /api/webhooks/{id}/deliveries/`: the webhook's deliveries, newest first, with their
    status, attempts and last error; paginated."""

    permission_classes = [IsAuthenticated]
    pagination_class = PageNumberPagination

    @extend_schema(operation_id="webhooks_deliveries_list", responses=DeliverySerializer(many=True))
    def get(self, request: Request, webhook_id: int) -> Response:
        hook = _own_webhook(request, webhook_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(delivery_list(webhook=hook), request, view=self)
        return paginator.get_paginated_response(DeliverySerializer(page, many=True).data)


class WebhookTestApi(APIView):
    """`POST /api/webhooks/{id}/test/` (no body): send a `ping` event now. While one ping is
    pending, asking again returns it instead of sending another."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="webhooks_test",
        request=None,
        responses={202: DeliverySerializer, 404: OpenApiResponse(description="Not yours.")},
    )
    def post(self, request: Request, webhook_id: int) -> Response:
        delivery = webhook_ping(webhook=_own_webhook(request, webhook_id))
        return Response(DeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)

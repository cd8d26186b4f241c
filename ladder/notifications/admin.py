from django.contrib import admin

from ladder.notifications.models import Delivery, NotificationSettings, Webhook


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = ["url", "owner", "active", "created"]
    list_filter = ["active"]
    search_fields = ["url", "owner__username"]
    exclude = ["secret"]


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["event", "owner", "channel", "webhook", "status", "attempts", "created"]
    list_filter = ["status", "channel", "event"]
    search_fields = ["owner__username", "webhook__url"]
    readonly_fields = [f.name for f in Delivery._meta.fields]


@admin.register(NotificationSettings)
class NotificationSettingsAdmin(admin.ModelAdmin):
    list_display = ["user", "email_events"]

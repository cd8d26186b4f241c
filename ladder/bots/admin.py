from django.contrib import admin

from ladder.bots.models import Bot, BotVersion


class BotVersionInline(admin.TabularInline):
    model = BotVersion
    extra = 0
    fields = ("number", "status", "size", "sha256", "created")
    readonly_fields = fields
    can_delete = False


@admin.register(Bot)
class BotAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "created"]
    search_fields = ["name", "owner__username"]
    inlines = [BotVersionInline]


@admin.register(BotVersion)
class BotVersionAdmin(admin.ModelAdmin):
    list_display = ["bot", "number", "status", "size", "created"]
    list_filter = ["status"]
    readonly_fields = ["bot", "number", "file", "sha256", "size", "created"]

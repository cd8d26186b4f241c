from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "ladder.notifications"
    label = "notifications"
    verbose_name = "Notifications"

    def ready(self) -> None:
        # Other apps send signals and never import notifications: the arrows point this way.
        from ladder.bots.signals import bot_disabled
        from ladder.matches.signals import match_settled
        from ladder.notifications.receivers import (
            on_bot_disabled,
            on_match_settled,
            on_tournament_status_changed,
        )
        from ladder.tournaments.signals import tournament_status_changed

        match_settled.connect(on_match_settled, dispatch_uid="notifications.on_match_settled")
        bot_disabled.connect(on_bot_disabled, dispatch_uid="notifications.on_bot_disabled")
        tournament_status_changed.connect(
            on_tournament_status_changed, dispatch_uid="notifications.on_tournament_status"
        )

from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    name = "ladder.tournaments"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # A settled tournament game moves its tournament on (matches do not import tournaments).
        from ladder.matches.signals import match_settled
        from ladder.tournaments.receivers import on_match_settled

        match_settled.connect(on_match_settled, dispatch_uid="tournaments.on_match_settled")

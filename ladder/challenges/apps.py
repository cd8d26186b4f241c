from django.apps import AppConfig


class ChallengesConfig(AppConfig):
    name = "ladder.challenges"
    label = "challenges"
    verbose_name = "Challenges"

    def ready(self) -> None:
        # A settled challenge frees its place: the next one waiting is sent (matches do not
        # import challenges).
        from ladder.challenges.receivers import on_match_settled
        from ladder.matches.signals import match_settled

        match_settled.connect(on_match_settled, dispatch_uid="challenges.on_match_settled")

from django.apps import AppConfig


class MatchmakingConfig(AppConfig):
    name = "ladder.matchmaking"
    label = "matchmaking"
    verbose_name = "Matchmaking"

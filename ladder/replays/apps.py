from django.apps import AppConfig


class ReplaysConfig(AppConfig):
    name = "ladder.replays"
    label = "replays"
    verbose_name = "Replays"

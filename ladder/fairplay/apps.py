from django.apps import AppConfig


class FairplayConfig(AppConfig):
    name = "ladder.fairplay"
    label = "fairplay"
    verbose_name = "Fair play"

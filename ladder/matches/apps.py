from django.apps import AppConfig


class MatchesConfig(AppConfig):
    name = "ladder.matches"
    label = "matches"
    verbose_name = "Matches"

    def ready(self) -> None:
        from ladder.matches import checks  # noqa: F401  (registers the system checks)

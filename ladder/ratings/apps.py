from django.apps import AppConfig


class RatingsConfig(AppConfig):
    name = "ladder.ratings"
    label = "ratings"
    verbose_name = "Ratings"

    def ready(self) -> None:
        from ladder.ratings import receivers  # noqa: F401  (connects the match_recorded receiver)

"""The Celery application: `celery -A ladder.celery worker`.

Configured from Django's settings (the `CELERY_` ones). Tasks live in each app's `tasks.py`
and are found by autodiscovery; a task only fetches by id and calls one service.
"""

import os

from celery import Celery

from ladder.worker_logging import quiet_stop

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")

# DjangoTask: tasks gain delay_on_commit, which sends them once the surrounding transaction
# commits (a worker must find the rows they name). The site's services send through
# ladder.task_sending instead, which does the same without raising a broker outage.
app = Celery("ladder", task_cls="celery.contrib.django.task:DjangoTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# A stop (Ctrl-C of `make run`, systemctl stop): one INFO line per match cut short.
quiet_stop()

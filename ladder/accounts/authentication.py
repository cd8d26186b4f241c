"""The API token under its two names: DRF's `Authorization: Token <key>`, and the standard
`Authorization: Bearer <key>` that generated clients send by default.

openapi-python-client's AuthenticatedClient sends `Bearer` unless told otherwise, and it does
not read the schema's security schemes, so a client generated from /api/schema/ would be
refused with the one keyword only. The key is the same; accepting it under both names adds no
way in.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import TokenAuthentication


class BearerTokenAuthentication(TokenAuthentication):
    """The user's API token sent as `Authorization: Bearer <key>`."""

    keyword = "Bearer"


class BearerTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    """In the schema as HTTP bearer authentication (`bearerAuth`), beside `tokenAuth`."""

    target_class = BearerTokenAuthentication
    name = "bearerAuth"
    priority = 1

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "The API token (POST /api/auth/token/, or the site's API token page) "
            "as `Authorization: Bearer <key>`; the same key as tokenAuth's `Token <key>`.",
        }

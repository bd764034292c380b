"""A credential refreshed once on a 401, without counting as a retry.

Cloud credentials expire or are revoked between calls: an Entra ID token provider, Google
credentials the SDK holds until they say they have expired. A 401 to such a credential is
answered by refreshing it (asking the provider for a new token, or ``credentials.refresh``)
and sending the same request once more, inside the same attempt: the engine's retries, and
its retry budget, never see it. A second 401 is the caller's AuthenticationError. A model
with a plain key has nothing to refresh, so its 401 is final at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..errors import AuthenticationError

__all__ = ["RefreshesOn401"]

logger = logging.getLogger("alloy.providers")

T = TypeVar("T")


class RefreshesOn401:
    """Mixed in before an ``SDKModel``: its sending calls resend once after a 401 that
    :meth:`refresh_credential` could act on."""

    name: str

    def refresh_credential(self) -> bool:
        """Make the next request present a fresh credential; False when there is none to
        refresh (a plain key), so the 401 stands."""
        return False

    def _refreshed_after(self, error: AuthenticationError) -> bool:
        if error.status_code != 401:
            return False
        try:
            refreshed = self.refresh_credential()
        except Exception as exc:  # the 401 is the error to report, not the refresh's failure
            logger.warning(
                "%s: refreshing the credential after a 401 failed (%s)",
                self.name,
                type(exc).__name__,
            )
            return False
        if refreshed:
            logger.info("%s: HTTP 401; credential refreshed, request sent once more", self.name)
        return refreshed

    def dispatch(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        send: Callable[..., T] = super().dispatch  # type: ignore[misc]
        try:
            return send(fn, *args, **kwargs)
        except AuthenticationError as error:
            if not self._refreshed_after(error):
                raise
        return send(fn, *args, **kwargs)

    async def adispatch(self, fn: Callable[..., Awaitable[T]], /, *args: Any, **kwargs: Any) -> T:
        send: Callable[..., Awaitable[T]] = super().adispatch  # type: ignore[misc]
        try:
            return await send(fn, *args, **kwargs)
        except AuthenticationError as error:
            # Refreshing may fetch a token over the network: not on the event loop.
            if not await asyncio.to_thread(self._refreshed_after, error):
                raise
        return await send(fn, *args, **kwargs)

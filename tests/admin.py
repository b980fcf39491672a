"""An admin check whose answer is known already, for the tests that act as a manager."""

from __future__ import annotations

from telesnap.services.play.managers import AdminCheck


def known_admin(answer: bool) -> AdminCheck:
    async def check() -> bool:
        return answer

    return check

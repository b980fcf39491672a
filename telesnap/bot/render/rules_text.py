"""The full /rules text: every rule a player needs, one translatable paragraph each.

It follows RULES.md in the players' words. Example cards are placeholders, so they can be
isolated inside right-to-left text.

>>> from telesnap.bot.render.i18n import translator
>>> text = full_rules(translator("en"))
>>> text.splitlines()[0]
'<b>📖 The rules of Snap</b>'
>>> "Snap Pot!" in text and len(text) < 4096
True
"""

from __future__ import annotations

import gettext

from .i18n import directed, isolate

__all__ = ["full_rules"]


def full_rules(tr: gettext.NullTranslations) -> str:
    """The /rules message in the language of ``tr`` (HTML, well under 4096 characters)."""

    def card(text: str) -> str:
        return isolate(text, tr)

    paragraphs = [
        tr.gettext("<b>📖 The rules of Snap</b>"),
        tr.gettext(
            "<b>Goal.</b> Win all the cards. A game has 2 to 12 players and one deck of 52 cards."
        ),
        tr.gettext(
            "<b>Deal.</b> A random dealer deals the whole deck face down, one card at a time, "
            "starting with the player on the dealer's left; some players may get one card more "
            "than others. Each player has a face-down pile and, next to it, a face-up pile."
        ),
        tr.gettext(
            "<b>Turns.</b> Players take turns in the order they joined, starting with the "
            "player on the dealer's left. On your turn press Flip: the top card of your "
            "face-down pile goes face up onto your face-up pile. If your face-down pile is "
            "empty, your face-up pile is first turned over, without shuffling, to become your "
            "face-down pile."
        ),
        tr.gettext(
            "<b>Matches.</b> A match is two or more face-up top cards that are alike: by "
            "default the same rank ({a} and {b}); a chat can choose the same rank and colour, "
            "or the same suit, instead. A match stays open until one of its piles is covered "
            "by a new card."
        ).format(a=card("7♠"), b=card("7♥")),
        tr.gettext(
            "<b>Snap!</b> When you see a match, press Snap!. Any player still in the game may "
            "call, not only the owners of the matching piles. The winner takes every face-up "
            "pile that shows a matching card and puts them face down under their own pile."
        ),
        tr.gettext(
            "<b>The race.</b> The bot decides by the moment each press reaches it. Calls that "
            "arrive within the chat's tie window (100 ms unless changed in /settings) of the "
            "first one tie; later calls are too slow, and you are told by how many "
            "milliseconds. Each player has one call per race, and nobody can flip until the "
            "race is decided."
        ),
        tr.gettext(
            "<b>Ties.</b> When several players call together, nobody wins: the matching piles "
            "go face up into the middle, onto the Snap Pot, with a matching card on top. Play "
            "goes on where it stopped."
        ),
        tr.gettext(
            "<b>Snap Pot!</b> When a face-up top card matches the top card of the Snap Pot, "
            "press Snap Pot!. The winner takes the pot and every face-up pile that matches it; "
            "a tie adds those piles to the pot. When Snap! and Snap Pot! are both right, the "
            "first call wins what it called for: Snap Pot! takes the pot and its piles, Snap! "
            "only the matching piles."
        ),
        tr.gettext(
            "<b>Wrong calls.</b> Calling when nothing matches costs you a card: the top card of "
            "your face-down pile goes under the pile of the player who flipped last. If that "
            "player is you, it goes to the player before you, on your right. A chat can switch "
            "this penalty off."
        ),
        tr.gettext(
            "<b>Too late.</b> Every button belongs to the table it came with. If the cards have "
            "changed since and nothing matches now, your press is too late: no penalty and no "
            "reward. Always use the newest message."
        ),
        tr.gettext(
            "<b>Out.</b> A player with no cards left in either pile is out: skipped, and unable "
            "to call. After a snap, play goes on with the player after the one who flipped last."
        ),
        tr.gettext(
            "<b>Winning.</b> You win when you hold every card that is not in the Snap Pot. The "
            "pot does not count, because it can get stuck for good (for example with all four "
            "tens inside). If the last cards of all the remaining players go into the pot "
            "together, they share the win."
        ),
        tr.gettext(
            "<b>Limits.</b> A chat can set a limit on a game (see /settings): when it is "
            "reached, the player with the most cards wins, and equal counts share the win. A "
            "player who leaves, or is removed, has their cards dealt out to the others. The "
            "creator or an admin can stop a game with /endgame: then nobody wins."
        ),
    ]
    return directed("\n\n".join(paragraphs), tr)

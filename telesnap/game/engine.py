"""The game of Snap: actions that check, decide and record what happens.

Each action verifies first (its ``verify_*`` raises a :class:`~telesnap.game.errors.SnapError`
saying why not), then records operations (:mod:`telesnap.game.operations`) in the history,
from which :meth:`Game.replay` rebuilds an identical game.

>>> from .cards import parse_cards
>>> game = Game()
>>> _ = game.deal(2, dealer=1, deck=parse_cards("7♠ 7♥ K♣ 2♦"))
>>> game.turn                       # left of the dealer flips first
0
>>> str(game.flip(0).card), str(game.flip(1).card)
('K♣', '2♦')
>>> _ = game.flip(0)
>>> _ = game.flip(1)
>>> game.matched_seats()            # 7♠ on 7♥
(0, 1)
>>> game.call(1, CallKind.SNAP, stamp_ns=5, sequence=1, seen_version=4).verdict
<CallVerdict.PENDING: 'pending'>
>>> game.resolve_race(tie_window_ms=100).winners
(1,)
>>> game.outcome
Outcome(winners=(1,), reason=<EndReason.ALL_CARDS: 'all_cards'>)
>>> Game.replay(game.history) == game
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from .apply import apply_operation
from .cards import Card, MatchMode, standard_deck
from .errors import (
    DuplicateCallError,
    GameOverError,
    NotInGameError,
    NotYourTurnError,
    PlayerOutError,
    RaceInProgressError,
    RepeatedPressError,
    SetupError,
    SnapError,
)
from .operations import (
    CallResult,
    CallVerdict,
    CardFlipped,
    EndReason,
    GameEnded,
    GameStarted,
    LeaveReason,
    Operation,
    PenaltyPaid,
    PlayerLeft,
    PlayerOut,
    RaceResolved,
    SnapCalled,
    TurnSkipped,
)
from .race import CallKind, decide_race, milliseconds_behind
from .state import Board, SeatStatus

MIN_PLAYERS = 2
MAX_PLAYERS = 12
_STANDARD_CARDS = frozenset(standard_deck())


class Game(Board):
    """A game of Snap, from the deal to the end."""

    __slots__ = ()

    @classmethod
    def replay(cls, history: Iterable[Operation]) -> Game:
        """Rebuild a game by carrying out every operation of a history in order."""
        game = cls()
        for op in history:
            game.carry_out(op)
        return game

    def carry_out(self, op: Operation) -> None:
        """Carry out one operation: a move's own, or a stored one replayed."""
        apply_operation(self, op)

    # -- deal ---------------------------------------------------------------------------

    def verify_deal(self, player_count: int, dealer: int, deck: Sequence[Card]) -> None:
        """Raise unless ``player_count`` players can be dealt ``deck`` by ``dealer``."""
        if self.is_started:
            raise SetupError("The cards have already been dealt.")
        if not MIN_PLAYERS <= player_count <= MAX_PLAYERS:
            raise SetupError(
                f"Snap needs {MIN_PLAYERS} to {MAX_PLAYERS} players, not {player_count}."
            )
        if not 0 <= dealer < player_count:
            raise SetupError(f"The dealer must be one of the {player_count} players.")
        if len(set(deck)) != len(deck) or not set(deck) <= _STANDARD_CARDS:
            raise SetupError("The deck must hold standard cards, each at most once.")
        if len(deck) < player_count:
            raise SetupError("The deck must hold at least one card per player.")

    def deal(
        self,
        player_count: int,
        *,
        dealer: int,
        deck: Sequence[Card],
        match_mode: MatchMode = MatchMode.RANK,
        wrong_call_penalty: bool = True,
    ) -> GameStarted:
        """Deal ``deck`` (first card first) one card at a time, starting left of the dealer.

        The caller shuffles and picks the dealer, so the engine has no randomness of its own;
        tests may deal fewer than 52 cards.
        """
        self.verify_deal(player_count, dealer, deck)
        op = GameStarted(player_count, dealer, tuple(deck), match_mode, wrong_call_penalty)
        self.carry_out(op)
        return op

    # -- flip ---------------------------------------------------------------------------

    def _verify_playing(self, seat: int) -> None:
        if not self.is_started:
            raise SetupError("The cards have not been dealt yet.")
        if self.is_over:
            raise GameOverError("The game is over.")
        if not 0 <= seat < len(self.seats) or self.seats[seat].status is SeatStatus.LEFT:
            raise NotInGameError("You are not playing in this game.")
        if self.seats[seat].status is SeatStatus.OUT:
            raise PlayerOutError("You have no cards left, so you are out of this game.")

    def verify_flip(self, seat: int, seen_version: int | None = None) -> None:
        """Raise unless ``seat`` may flip now, pressing a button of board ``seen_version``.

        An older board's button (not a typed command's None) raises
        :class:`RepeatedPressError` if it was shown before the presser's last turn ended.
        """
        self._verify_playing(seat)
        if self.is_race_open:
            raise RaceInProgressError("Wait: a Snap race is being decided.")
        if seat != self.turn:
            raise NotYourTurnError("It is not your turn to flip.")
        if (
            seen_version is not None
            and self.board_version != seen_version < self.turn_ended_at[seat]
        ):
            raise RepeatedPressError("You have flipped since that board was shown.")

    def flip(self, seat: int, seen_version: int | None = None) -> CardFlipped:
        """Flip the top face-down card (turning the face-up pile over first if needed)."""
        self.verify_flip(seat, seen_version)
        player = self.seats[seat]
        turned_over = not player.face_down
        card = player.face_down[0] if player.face_down else player.face_up[0]
        op = CardFlipped(seat, card, turned_over)
        self.carry_out(op)
        return op

    def skip(self, seat: int) -> TurnSkipped:
        """Pass ``seat``'s turn on without a flip (an absent player); only a flippable turn."""
        self.verify_flip(seat)
        op = TurnSkipped(seat)
        self.carry_out(op)
        return op

    # -- call ---------------------------------------------------------------------------

    def verify_call(self, seat: int, seen_version: int, kind: CallKind) -> None:
        """Raise unless ``seat`` may call now, pressing a button of board ``seen_version``.

        A repeat of a call of ``kind`` from that board raises :class:`RepeatedPressError`.
        """
        self._verify_playing(seat)
        if not 0 <= seen_version <= self.board_version:
            raise SnapError("That button does not belong to this game's board.")
        if any(call.seat == seat for call in self.pending_calls) or (
            seat in self.deferred_wrong_calls
        ):
            raise DuplicateCallError("You have already called; wait for the result.")
        if self.called_from[kind][seat] == seen_version:
            raise RepeatedPressError("You pressed that button already; it counts once.")

    def can_call(self, seat: int, seen_version: int, kind: CallKind) -> bool:
        """Whether :meth:`call` would be accepted (whatever its verdict)."""
        return _allowed(lambda: self.verify_call(seat, seen_version, kind))

    def is_call_correct(self, kind: CallKind) -> bool:
        """Whether a call of ``kind`` is correct on the board as it is now."""
        return self.is_snap_showing() if kind is CallKind.SNAP else self.is_snap_pot_showing()

    def call(
        self, seat: int, kind: CallKind, *, stamp_ns: int, sequence: int, seen_version: int
    ) -> SnapCalled:
        """Record a "Snap!" or "Snap Pot!" call and return its verdict on arrival.

        A correct call joins the race; a wrong one is penalised (after the race, if one
        is open); one made on a board that has changed is too late or too slow.
        """
        self.verify_call(seat, seen_version, kind)
        behind: int | None = None
        if self.is_call_correct(kind):
            verdict = CallVerdict.PENDING
        elif seen_version != self.board_version:
            verdict = CallVerdict.TOO_LATE
            race = self.last_race
            if race and race.board_version == seen_version and stamp_ns >= race.first_stamp_ns:
                verdict = CallVerdict.TOO_SLOW
                behind = milliseconds_behind(stamp_ns, race.first_stamp_ns)
        else:
            verdict = CallVerdict.WRONG
        op = SnapCalled(seat, kind, stamp_ns, sequence, seen_version, verdict, behind)
        self.carry_out(op)
        if verdict is CallVerdict.WRONG and not self.is_race_open:
            self._pay_penalty(seat)
            self._settle()
        return op

    def _pay_penalty(self, seat: int) -> None:
        if not self.wrong_call_penalty:
            return
        receiver = self.last_flipper
        if receiver is None or receiver == seat or not self.seats[receiver].is_active:
            receiver = self.previous_active_before(seat)
        payer = self.seats[seat]
        if receiver is None or payer.card_count == 0:
            return
        turned_over = not payer.face_down
        card = payer.face_down[0] if payer.face_down else payer.face_up[0]
        self.carry_out(PenaltyPaid(seat, receiver, card, turned_over))

    # -- race ---------------------------------------------------------------------------

    def resolve_race(self, tie_window_ms: int) -> RaceResolved:
        """Decide the open race and carry it out; wrong calls made meanwhile are penalised after."""
        if self.is_over:
            raise GameOverError("The game is over.")
        decision = decide_race(self.pending_calls, tie_window_ms)
        kinds = {call.kind for call in decision.winners}
        piles: set[int] = set()
        if CallKind.SNAP in kinds:
            piles.update(self.matched_seats())
        if CallKind.SNAP_POT in kinds:
            piles.update(self.pot_matched_seats())
        pot_taken = not decision.is_tie and CallKind.SNAP_POT in kinds
        cards = sum(len(self.seats[index].face_up) for index in piles)
        if pot_taken:
            cards += len(self.pot)
        won = CallVerdict.TIED if decision.is_tie else CallVerdict.WON
        results = tuple(CallResult(call.seat, won) for call in decision.winners) + tuple(
            CallResult(call.seat, CallVerdict.TOO_SLOW, behind)
            for call, behind in decision.too_slow
        )
        op = RaceResolved(
            decision.winners[0].kind,
            decision.winning_seats,
            tuple(sorted(piles)),
            pot_taken,
            cards,
            results,
        )
        wrong_callers = self._wrong_callers_in_stamp_order()
        self.carry_out(op)
        for seat in wrong_callers:
            self._pay_penalty(seat)
        self._settle()
        return op

    def _wrong_callers_in_stamp_order(self) -> list[int]:
        """The seats whose wrong calls wait for the race, in stamp then sequence order.

        Stamp order (not arrival) keeps the result independent of handling order. While a race
        is open only calls are recorded, so its calls are the SnapCalled ops ending the history.
        """
        waiting = set(self.deferred_wrong_calls)
        keys: dict[int, tuple[int, int, int]] = {}
        for op in reversed(self.history):
            if not isinstance(op, SnapCalled):
                break
            if op.seat in waiting and op.verdict is CallVerdict.WRONG:
                keys[op.seat] = (op.stamp_ns, op.sequence, op.seat)
        return sorted(waiting, key=lambda seat: keys.get(seat, (0, 0, seat)))

    # -- leave and end ------------------------------------------------------------------

    def verify_remove(self, seat: int) -> None:
        """Raise unless ``seat`` can leave (or be removed from) the game now.

        A player who is out has no cards to hand on and cannot leave (PlayerOutError).
        """
        if not self.is_started:
            raise SetupError("The cards have not been dealt yet.")
        if self.is_over:
            raise GameOverError("The game is over.")
        if not 0 <= seat < len(self.seats) or self.seats[seat].status is SeatStatus.LEFT:
            raise NotInGameError("That player is not in this game.")
        if self.seats[seat].status is SeatStatus.OUT:
            raise PlayerOutError("That player is already out of this game.")
        if self.is_race_open:
            raise RaceInProgressError("Wait: a Snap race is being decided.")

    def can_remove(self, seat: int) -> bool:
        """Whether :meth:`remove` would succeed."""
        return _allowed(lambda: self.verify_remove(seat))

    def remove(self, seat: int, reason: LeaveReason = LeaveReason.LEFT) -> PlayerLeft:
        """Take a player out of the game.

        Their cards are dealt one at a time to the active players from the leaver's left, to
        the bottom of each face-down pile.
        """
        self.verify_remove(seat)
        leaver = self.seats[seat]
        count = len(self.seats)
        # While the game runs, at least one other player is active, or the leaver has no cards.
        others = sorted(
            (i for i in self.active_seats() if i != seat), key=lambda i: (i - seat) % count
        )
        cards = [*leaver.face_down, *leaver.face_up]
        given = tuple((others[k % len(others)], card) for k, card in enumerate(cards))
        op = PlayerLeft(seat, reason, given)
        self.carry_out(op)
        self._settle()
        return op

    def verify_end_by_limit(self) -> None:
        """Raise unless the game can be ended by the chat's limit now."""
        if not self.is_started:
            raise SetupError("The cards have not been dealt yet.")
        if self.is_over:
            raise GameOverError("The game is over.")
        if self.is_race_open:
            raise RaceInProgressError("Wait: a Snap race is being decided.")

    def can_end_by_limit(self) -> bool:
        """Whether :meth:`end_by_limit` would succeed."""
        return _allowed(self.verify_end_by_limit)

    def end_by_limit(self) -> GameEnded:
        """End the game because a limit was reached: the most cards wins, equal counts share."""
        self.verify_end_by_limit()
        counts = self.card_counts()
        best = max(counts[index] for index in self.active_seats())
        winners = tuple(i for i in self.active_seats() if counts[i] == best)
        op = GameEnded(winners, EndReason.LIMIT, counts)
        self.carry_out(op)
        return op

    def abandon(self) -> GameEnded:
        """End the game with no winner (stopped by an admin or left idle too long)."""
        if not self.is_started:
            raise SetupError("The cards have not been dealt yet.")
        if self.is_over:
            raise GameOverError("The game is over.")
        op = GameEnded((), EndReason.ABANDONED, self.card_counts())
        self.carry_out(op)
        return op

    def _settle(self) -> None:
        """Mark players with no cards as out, and end the game when one player is left."""
        if self.is_over:
            return
        newly_out = [i for i in self.active_seats() if self.seats[i].card_count == 0]
        for index in newly_out:
            self.carry_out(PlayerOut(index))
        active = self.active_seats()
        if len(active) <= 1:
            winners = tuple(active) if active else tuple(newly_out)
            self.carry_out(GameEnded(winners, EndReason.ALL_CARDS, self.card_counts()))


def _allowed(verify: Callable[[], None]) -> bool:
    try:
        verify()
    except SnapError:
        return False
    return True

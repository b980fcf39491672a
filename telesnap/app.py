"""The one place where everything is wired: database, services, bot, transport.

``telesnap run`` (:mod:`telesnap.cli.run`), the sandbox and the end-to-end
tests all go through :class:`BotRunner`; it takes its settings from
:class:`~telesnap.config.Settings` and reads no environment of its own.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncEngine
from telegram.error import InvalidToken, NetworkError

from .bot.delivery.courier import Courier
from .bot.delivery.lanes import FloodLimits, Outbox
from .bot.delivery.presenter import Presenter
from .bot.delivery.resender import Resender, ResendPolicy
from .bot.delivery.tidy import BoardTidier
from .bot.handlers.menu import publish_commands
from .bot.handlers.privacy import install_privacy_service
from .bot.handlers.runtime import Runtime, install
from .bot.handlers.stats import install_stats_service
from .bot.handlers.timer_loop import TimerLoop
from .bot.ingress.application import BotApplication, StampingBot, build_application
from .bot.ingress.dispatcher import InboxDispatcher
from .bot.ingress.gate import IntakeGate, toast_turned_away
from .bot.ingress.health import Readiness, install_readiness
from .bot.ingress.intake import Intake
from .bot.ingress.receipts import ReceiptBook
from .bot.ingress.relevance import ALLOWED_UPDATES
from .bot.ingress.webhook import WebhookServer
from .bot.referee.races import RaceReferee, RaceSweeper
from .bot.render.callbacks import CallbackSigner
from .bot.render.i18n import translator
from .bot.render.toasts import QUERY_LIFETIME_S, answer_unfinished
from .config import ConfigError, Settings
from .coordination import coordination_for
from .services.chat_settings import SettingsService
from .services.housekeeping import HousekeepingService
from .services.inbox import InboxService
from .services.notify import NotifyService
from .services.outbox.record import record_boards
from .services.outbox.service import OutboxService
from .services.play.lobby import LobbyService
from .services.play.races import RaceService
from .services.play.service import PlayService
from .services.play.store import GameStore
from .services.privacy import PrivacyService
from .services.stats.service import StatsService
from .services.timers.planner import TimerPlanner
from .services.timers.service import TimerService
from .storage.database import create_engine, database_answers, session_factory
from .storage.liveness import LocalLiveness, PostgresLiveness
from .storage.migrate import upgrade_database
from .storage.uow import UnitsOfWork
from .support.retry import Backoff

logger = logging.getLogger(__name__)

# python-telegram-bot 22 warns unless durations are timedeltas; opt in to the new behaviour.
os.environ.setdefault("PTB_TIMEDELTA", "1")


@dataclass(frozen=True)
class Webhook:
    """How to receive updates by webhook instead of long polling."""

    url: str
    host: str
    port: int
    secret: str


class BotRunner:
    """Starts and stops the whole bot: migrations, database, application, transport."""

    def __init__(
        self,
        settings: Settings,
        *,
        limits: FloodLimits | None = None,
        shuffle_seed: int | None = None,
        webhook: Webhook | None = None,
        poll_interval: float = 0.0,
        clock: Callable[[], datetime] | None = None,
        run_timers: bool = True,
        resume: bool = True,
        resend: ResendPolicy | None = None,
    ) -> None:
        """Prepare a bot; ``clock`` and ``run_timers=False`` let tests drive the timers.

        ``limits`` and ``shuffle_seed`` default to what ``settings`` says; ``resend``
        says how often boards nobody sends are looked for (and taken over).

        Only a *cold start* (no other worker alive on the database, see
        :mod:`telesnap.storage.liveness`) does what a restart does: decide the
        races a stop interrupted and post every running game again; a worker that
        joins running ones leaves the games to them. ``resume=False`` skips it
        even on a cold start.
        """
        if not settings.token:
            raise ValueError("TELESNAP_TOKEN is required to run the bot")
        self.settings = settings
        self._limits = limits or FloodLimits(enabled=settings.flood_control)
        self._shuffle_seed = shuffle_seed if shuffle_seed is not None else settings.shuffle_seed
        self._webhook = webhook
        self._poll_interval = poll_interval
        self._clock = clock
        self._run_timers = run_timers
        self._resume_games = resume
        self._resend = resend
        self.timer_loop: TimerLoop | None = None
        self.resender: Resender | None = None
        self.race_sweeper: RaceSweeper | None = None
        self._boards: OutboxService | None = None
        self._engine: AsyncEngine | None = None
        self._liveness: LocalLiveness | PostgresLiveness | None = None
        self.cold_start: bool | None = None
        """Whether this start found no other worker alive (None: not started yet)."""
        self.application: BotApplication | None = None
        self.runtime: Runtime | None = None
        self.webhook_server: WebhookServer | None = None
        self.dispatcher: InboxDispatcher | None = None

    @property
    def shuffle_seed(self) -> int | None:
        """The seed every game's shuffle is pinned to (None: a fresh one per game)."""
        return self._shuffle_seed

    @property
    def limits(self) -> FloodLimits:
        """The flood limits the outbox keeps to."""
        return self._limits

    @property
    def engine(self) -> AsyncEngine | None:
        """The database engine while the bot runs (tests inject database faults on it)."""
        return self._engine

    async def start(self) -> None:
        """Migrate the database, connect, resume the running games and start listening."""
        token = self.settings.token
        assert token is not None
        await upgrade_database(self.settings.database_url)
        self._engine = create_engine(self.settings.database_url, self.settings.pool)
        units = UnitsOfWork(session_factory(self._engine))
        # One process (SQLite) or several workers (PostgreSQL): decided here, once.
        coordination = coordination_for(self._engine, units)
        planner = TimerPlanner(self._clock) if self._clock else TimerPlanner()
        store = GameStore(planner, shared=coordination.shared)
        # The timers and the board views share one clock: a turn runs from its board shown.
        boards = self._boards = OutboxService(
            units, planner.now, leases=coordination.leases, watch=coordination.watch
        )
        liveness = self._liveness = coordination.liveness(boards.owner)
        record_boards(store)
        signer = CallbackSigner.for_token(token)
        book = ReceiptBook(signer, self.settings.host_id)
        application = build_application(token, self.settings.api_url)
        self.application = application
        inbox = InboxService(units)
        claims = coordination.claims
        dispatcher = InboxDispatcher(application, book, inbox, claims)
        self.dispatcher = dispatcher
        lobby = LobbyService(units, store, shuffle_seed=self._shuffle_seed)
        play = PlayService(units, store)
        races = RaceService(units, store)
        chat_settings = SettingsService(units, store)
        # A 403 from any send means the bot was removed: the chat's games end.
        outbox = Outbox(
            application.bot,
            self._limits,
            on_forbidden=lambda chat_id: runtime.bot_removed(chat_id),
            slots=coordination.slots(self._limits, boards.with_states),
        )
        courier = Courier(outbox)
        gate = IntakeGate(calls_in_flight=book.calls_on_their_way, waiting_from=book.waiting_from)
        intake = Intake(
            book, inbox, dispatcher, gate, toast_turned_away(application.bot, courier.spawn)
        )
        assert isinstance(application.bot, StampingBot)
        application.bot.store_into(intake)
        presenter = Presenter(courier, signer, chat_settings, boards, tidier=BoardTidier(courier))
        runtime = Runtime(
            bot=application.bot,
            lobby=lobby,
            play=play,
            races=races,
            settings=chat_settings,
            book=book,
            gate=gate,
            signer=signer,
            courier=courier,
            presenter=presenter,
            notify=NotifyService(units),
            referee=RaceReferee(
                application.bot, races, book, presenter.show_race, pledges=liveness
            ),
        )
        self.runtime = runtime
        self.timer_loop = TimerLoop(runtime, TimerService(units, store), HousekeepingService(units))
        store.planner.subscribe(self.timer_loop.wake)
        install(application, runtime)
        install_readiness(
            application,
            Readiness(partial(database_answers, self._engine), application.bot.get_me, claims.ping),
        )
        install_stats_service(application, StatsService(units))
        install_privacy_service(application, PrivacyService(units))
        await self._initialize(application)
        await publish_commands(application)
        await application.start()
        # A cold start holds the others back (they wait here) until it has resumed. The
        # owner lock is taken here too, before this worker claims its first chat.
        cold = self.cold_start = await liveness.start()
        started = datetime.now(UTC)
        await dispatcher.start()  # first the calls a stop left in the inbox: they join races
        if cold:
            logger.info("cold start: no other worker is alive on this database")
            since = started - timedelta(seconds=QUERY_LIFETIME_S)
            if unfinished := await inbox.take_unfinished_presses(since, started):
                courier.spawn(answer_unfinished(application.bot, unfinished))
            await boards.take_over_all()  # nobody else is alive: whoever held a chat died
            if self._resume_games:
                await self._resume(runtime)
        await liveness.joined()
        self.resender = Resender(presenter, boards, self._resend)
        self.resender.start()
        self.race_sweeper = RaceSweeper(runtime.referee, races)  # races a killed worker left
        self.race_sweeper.start()
        if self._run_timers:
            self.timer_loop.start()
        if self._webhook is None:
            assert application.updater is not None
            await application.bot.delete_webhook()
            await application.updater.start_polling(
                poll_interval=self._poll_interval,
                timeout=30,
                drop_pending_updates=False,
                allowed_updates=list(ALLOWED_UPDATES),
            )
        else:
            server = WebhookServer(
                application,
                intake,
                secret=self._webhook.secret,
                host=self._webhook.host,
                port=self._webhook.port,
                path=urlsplit(self._webhook.url).path or "/telegram",
            )
            await server.start()
            self.webhook_server = server
            await application.bot.set_webhook(
                self._webhook.url,
                secret_token=self._webhook.secret,
                allowed_updates=list(ALLOWED_UPDATES),
            )
        logger.info("telesnap is running as @%s", application.bot.username)

    @staticmethod
    async def _initialize(application: BotApplication) -> None:
        """Connect to the Bot API, waiting (with backoff) while it is unreachable."""
        backoff = Backoff(1.0, 30.0)
        while True:
            try:
                await application.initialize()
                return
            except InvalidToken:
                raise ConfigError("TELESNAP_TOKEN was refused by the Bot API server") from None
            except NetworkError as error:
                delay = backoff.next()
                logger.warning("the Bot API is unreachable (%s); retrying in %.0f s", error, delay)
                await asyncio.sleep(delay)

    async def _resume(self, runtime: Runtime) -> None:
        """Decide interrupted races, send what was committed but not sent, show the games again.

        The boards of a running game that were never sent go out merged with its
        table shown again; those of games that ended meanwhile go out on their own.
        """
        raced = set()
        for race in await runtime.races.open_races():
            await runtime.presenter.remember_language(race.place)
            if not runtime.referee.is_deciding(race.place):  # not joined by a pending call
                runtime.referee.decide_now(race)
            if await runtime.referee.wait_until_decided(race.place) is not None:
                raced.add(race.game_id)
        running = await runtime.play.running_games()
        running_ids = {outcome.table.game_id for _, outcome in running}
        for chat_id in await runtime.presenter.outbox.chats_waiting():
            await runtime.presenter.show_unsent(chat_id, skip_games=running_ids)
        for place, outcome in running:
            if outcome.table.game_id in raced:
                continue  # deciding its race showed the table
            tr = translator(await runtime.presenter.remember_language(place))
            runtime.presenter.say(place, tr.gettext("♻️ I am back: the game goes on."))
            runtime.presenter.show_play(place, outcome)

    async def stop(self) -> None:
        """Drain: take no more updates, finish the ones taken, then close everything.

        The webhook answers 503 from the start of the drain (Telegram or the
        reverse proxy delivers elsewhere), polling stops; an update stored but not
        taken stays in the inbox for another worker, or for the next start.
        """
        application = self.application
        if application is not None:
            if self.webhook_server is not None:
                self.webhook_server.drain()
            if application.updater is not None and application.updater.running:
                await application.updater.stop()
            if self.dispatcher is not None:
                await self.dispatcher.drain()
            if self.webhook_server is not None:
                await self.webhook_server.stop()
            if application.running:
                await application.stop()
            if self.timer_loop is not None:
                await self.timer_loop.stop()
            if self.resender is not None:
                await self.resender.stop()
            if self.race_sweeper is not None:
                await self.race_sweeper.stop()
            if self.runtime is not None:
                await self.runtime.close()
            await self._let_chats_go()
            await application.shutdown()
            if isinstance(application.bot, StampingBot):
                await application.bot.close_transports()
        if self._liveness is not None:
            await self._liveness.close()  # the others see this worker gone
        if self._engine is not None:
            await self._engine.dispose()

    async def _let_chats_go(self) -> None:
        """Give up this worker's chats, so that another worker sends their boards at once."""
        if self._boards is None or self._engine is None:
            return
        try:
            await self._boards.release_all()
        except Exception:
            logger.exception("giving up the chats this worker sent to failed; their leases lapse")

    async def run_until_stopped(self) -> None:
        """Run until SIGINT or SIGTERM (also while still starting, e.g. waiting for the API)."""
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        starting = asyncio.create_task(self.start())
        stopping = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if starting.done():
                starting.result()  # a failed start raises here
                await stopping
        finally:
            for task in (starting, stopping):
                task.cancel()
            await asyncio.gather(starting, stopping, return_exceptions=True)
            await self.stop()

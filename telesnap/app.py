"""The one place where everything is wired: database, services, bot, transport.

``telesnap run``, the sandbox and the end-to-end tests all go through :class:`BotRunner`,
which reads no environment of its own (only :class:`~telesnap.config.Settings`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncEngine
from telegram import Bot, Update
from telegram.error import BadRequest, InvalidToken

from .bot.delivery.direct import KeyboardRemovalPost
from .bot.delivery.live import RecentLines
from .bot.delivery.lookout import GRACE, LOOK_EVERY_S, Lookout
from .bot.delivery.pace import FloodLimits, Pacer
from .bot.delivery.sender import Senders
from .bot.delivery.show import HeadShow
from .bot.handlers.membership import removes_the_bot
from .bot.handlers.menu import publish_commands
from .bot.handlers.privacy import PrivacyBot
from .bot.handlers.runtime import Runtime, install
from .bot.handlers.stats import StatsBot
from .bot.ingress.api_errors import connect, log_polling_error, revoked_token, short_reason
from .bot.ingress.application import (
    LONG_POLL_S,
    BotApplication,
    StampingBot,
    build_application,
)
from .bot.ingress.dispatcher import TOPIC_BATCH, InboxDispatcher
from .bot.ingress.gate import IntakeGate
from .bot.ingress.health import Readiness
from .bot.ingress.intake import Intake
from .bot.ingress.receipts import ReceiptBook
from .bot.ingress.redaction import install_token_redaction
from .bot.ingress.relevance import ALLOWED_UPDATES
from .bot.ingress.webhook import WebhookServer
from .bot.referee.races import RaceReferee, RaceSweeper
from .bot.render.callbacks import CallbackSigner
from .bot.render.toasts import QUERY_LIFETIME_S, answer_unfinished, press_toast
from .config import ConfigError, Settings, TokenRevokedError
from .coordination import LocalCoordination, PostgresCoordination, coordination_for
from .services.chat_settings import ChatLanguages, SettingsService
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
from .services.timers.loop import TimerLoop
from .services.timers.planner import TimerPlanner
from .services.timers.service import TimerService
from .storage.database import create_engine, database_answers, session_factory
from .storage.migrate import upgrade_database
from .storage.uow import GroupCommit, UnitsOfWork
from .support.tasks import TaskSet

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
        wall_time_of: Callable[[datetime], datetime] | None = None,
        run_timers: bool = True,
        resume: bool = True,
        takeover_grace: timedelta = GRACE,
        takeover_every_s: float = LOOK_EVERY_S,
    ) -> None:
        """Prepare a bot; ``clock`` and ``run_timers=False`` let tests drive the timers.

        ``wall_time_of``: the wall time when ``clock`` read a moment, where ``clock`` jumps
        (calls are timed on the wall: see :class:`~.services.play.service.PlayService`).

        Only a cold start (no other worker alive, see :mod:`telesnap.coordination`) decides the
        races a stop interrupted and posts every running game again; ``resume=False`` skips it.
        Unsent rows older than ``takeover_grace`` are looked for every ``takeover_every_s``.
        """
        if not settings.token:
            raise ValueError("TELESNAP_TOKEN is required to run the bot")
        self.settings = settings
        self.limits = limits or FloodLimits(enabled=settings.flood_control)
        """The flood limits the outbox keeps to."""
        self.shuffle_seed = shuffle_seed if shuffle_seed is not None else settings.shuffle_seed
        """The seed every game's shuffle is pinned to (None: a fresh one per game)."""
        self._webhook = webhook
        if webhook is not None:  # python-telegram-bot logs setWebhook's parameters at DEBUG
            install_token_redaction(secret=webhook.secret)
        self._poll_interval = poll_interval
        self._clock = clock
        self._wall_time_of = wall_time_of
        self._run_timers = run_timers
        self._resume_games = resume
        self._takeover = (takeover_grace, takeover_every_s)
        self.timer_loop: TimerLoop | None = None
        self.senders: Senders | None = None
        self.lookout: Lookout | None = None
        self.race_sweeper: RaceSweeper | None = None
        self.engine: AsyncEngine | None = None
        """The database engine while the bot runs (tests inject database faults on it)."""
        self._coordination: LocalCoordination | PostgresCoordination | None = None
        self.application: BotApplication | None = None
        self.runtime: Runtime | None = None
        self.webhook_server: WebhookServer | None = None
        self.dispatcher: InboxDispatcher | None = None

    async def start(self) -> None:
        """Migrate the database, connect, resume the running games and start listening."""
        token = self.settings.token
        assert token is not None
        await upgrade_database(self.settings.database_url, pool=self.settings.pool)
        engine = self.engine = create_engine(self.settings.database_url, self.settings.pool)
        units = UnitsOfWork(session_factory(engine))
        # The updates received, the sent marks and the content of handled updates share commits.
        together = GroupCommit(units)
        # One process (SQLite) or several workers (PostgreSQL): decided here, once.
        coordination = self._coordination = coordination_for(engine)
        planner = TimerPlanner(self._clock) if self._clock else TimerPlanner()
        store = GameStore(planner, shared=coordination.shared)
        record_boards(store)
        # The timers and the boards shown share one clock: a turn runs from its board shown.
        outbox = OutboxService(
            units,
            planner.now,
            watch=units.outbox_watch,
            keep_lines=not coordination.shared,
            together=together,
        )
        signer = CallbackSigner.for_token(token)
        book = ReceiptBook(signer, self.settings.host_id)
        application = self.application = build_application(token, self.settings.api_url)
        inbox = InboxService(units, together)
        dispatcher = self.dispatcher = InboxDispatcher(application, book, inbox, coordination)
        languages = ChatLanguages(units)
        chat_settings = SettingsService(units, store, languages)
        lobby = LobbyService(units, store, shuffle_seed=self.shuffle_seed, languages=languages)
        show = HeadShow(
            application.bot, outbox, signer, RecentLines(outbox.boards_shown), planner.now
        )
        grace, every_s = self._takeover
        pacer = Pacer(self.limits, coordination)
        senders = self.senders = Senders(
            application.bot,
            outbox,
            coordination,
            pacer,
            languages,
            show,
            # A 403 from any send means the bot was removed: the chat's games end.
            on_forbidden=lambda chat_id: runtime.bot_removed(chat_id),
        )
        self.lookout = Lookout(senders, outbox, grace=grace, every_s=every_s)
        jobs = TaskSet()
        gate = IntakeGate(
            calls_in_flight=book.calls_on_their_way,
            waiting_from=book.waiting_from,
            plays_in=store.plays_in,
        )
        intake = Intake(book, inbox, dispatcher, gate, press_toast(application.bot, jobs.spawn))
        assert isinstance(application.bot, StampingBot)
        application.bot.store_into(intake)
        races = RaceService(units, store)
        runtime = self.runtime = Runtime(
            bot=application.bot,
            lobby=lobby,
            play=PlayService(units, store, self._wall_time_of),
            races=races,
            settings=chat_settings,
            book=book,
            signer=signer,
            senders=senders,
            referee=RaceReferee(application.bot, races, book, pledges=coordination),
            gate=gate,
            notify=NotifyService(units),
            jobs=jobs,
            stats=StatsBot.for_token(StatsService(units), application.bot.token),
            privacy=PrivacyBot.for_token(PrivacyService(units), application.bot.token),
        )
        self.timer_loop = TimerLoop(TimerService(units, store), HousekeepingService(units))
        store.planner.subscribe(self.timer_loop.wake)
        install(application, runtime)
        await connect(application, self.settings.api_url)
        await publish_commands(application)
        await application.start()
        # Whatever can still refuse the start (the listener's address, the webhook URL) is
        # checked before the cold start's resume: a start that fails posts nothing.
        await self._open_transport(application, intake, engine, coordination)
        # A cold start holds the others back (they wait here) until it has resumed.
        cold = await coordination.start(dispatcher.wake, senders.rows_written)
        started = datetime.now(UTC)
        if cold:  # before anything is sent: the resume and the rows a kill left
            if not coordination.shared:  # shared windows are stored: nothing to count again
                window = timedelta(seconds=self.limits.group_window_s)
                for chat_id, sends in (await outbox.sends_within(window)).items():
                    pacer.sent_before_this_start(chat_id, [ago.total_seconds() for ago in sends])
            for chat_id in await _removals_left(inbox, application.bot):
                senders.close_chat(chat_id)  # its games end when the removal is handled
            for chat_id, message_id in await outbox.boards_a_stop_may_have_left_live():
                senders.post(KeyboardRemovalPost(chat_id, message_id))  # before any board is new
        await dispatcher.start()  # first the calls a stop left in the inbox: they join races
        if cold:
            logger.info("cold start: no other worker is alive on this database")
            since = started - timedelta(seconds=QUERY_LIFETIME_S)
            if unfinished := await inbox.take_unfinished_presses(since, started):
                jobs.spawn(answer_unfinished(application.bot, unfinished))
            if self._resume_games:
                await self._resume(runtime)
        await coordination.joined()
        self.lookout.start()  # at once: what was committed and never sent goes out
        self.race_sweeper = RaceSweeper(runtime.referee, races)  # races a killed worker left
        self.race_sweeper.start()
        if self._run_timers:
            self.timer_loop.start()
        if self._webhook is None:
            assert application.updater is not None
            await application.updater.start_polling(
                poll_interval=self._poll_interval,
                timeout=LONG_POLL_S,
                drop_pending_updates=False,
                allowed_updates=list(ALLOWED_UPDATES),
                error_callback=log_polling_error,
            )
        else:
            assert self.webhook_server is not None
            self.webhook_server.take_updates()
        logger.info("telesnap is running as @%s", application.bot.username)

    async def _open_transport(
        self,
        application: BotApplication,
        intake: Intake,
        engine: AsyncEngine,
        coordination: LocalCoordination | PostgresCoordination,
    ) -> None:
        """Delete the webhook (polling), or listen and set it; updates are taken only later.

        The listener answers updates 503 until the resume is done (Telegram delivers them
        again): a call taken before it would overtake the calls a stop left in the inbox.
        Binding first, rather than after the resume, lets a port in use fail the start.
        """
        if self._webhook is None:
            await application.bot.delete_webhook()
            return
        path = urlsplit(self._webhook.url).path or "/telegram"
        server = WebhookServer(
            application,
            intake,
            secret=self._webhook.secret,
            host=self._webhook.host,
            port=self._webhook.port,
            path=path,
            taking_updates=False,
            readiness=Readiness(
                partial(database_answers, engine),
                application.bot.get_me,
                coordination.ping if coordination.shared else None,
            ),
        )
        await server.start()
        self.webhook_server = server
        try:
            await application.bot.set_webhook(
                self._webhook.url,
                secret_token=self._webhook.secret,
                allowed_updates=list(ALLOWED_UPDATES),
            )
        except BadRequest as error:
            raise ConfigError(
                f"--webhook-url {self._webhook.url} was refused by the Bot API: {error.message}"
            ) from None

    async def _resume(self, runtime: Runtime) -> None:
        """Decide the races a stop interrupted, and show every other running game again.

        Each game shown again is a board row of its own, after the rows its game committed and
        never sent: they go out together, in order.
        """
        raced = set()
        for race in await runtime.races.open_races():
            if not runtime.referee.is_deciding(race.place):  # not joined by a pending call
                runtime.referee.decide_now(race)
            if await runtime.referee.wait_until_decided(race.place) is not None:
                raced.add(race.game_id)  # deciding its race showed the table
        await runtime.play.show_running_again(skip=raced)

    async def stop(self) -> None:
        """Drain: take no more updates, finish the ones taken, then close everything.

        The webhook answers 503 from the start (so updates go elsewhere); an update stored but
        not taken stays in the inbox for another worker, or for the next start.
        """
        application = self.application
        if application is not None:
            if self.webhook_server is not None:
                self.webhook_server.drain()
            if application.updater is not None and application.updater.running:
                with suppress(InvalidToken):  # what ended its polling: logged, and the exit's cause
                    await application.updater.stop()
            if self.dispatcher is not None:
                await self.dispatcher.drain()
            if self.webhook_server is not None:
                await self.webhook_server.stop()
            if application.running:
                await application.stop()
            if self.timer_loop is not None:
                await self.timer_loop.stop()
            if self.race_sweeper is not None:
                await self.race_sweeper.stop()
            if self.lookout is not None:
                await self.lookout.stop()
            if self.runtime is not None:
                await self.runtime.close()
            await application.shutdown()
            if isinstance(application.bot, StampingBot):
                await application.bot.close_transports()
        if self._coordination is not None:
            await self._coordination.close()  # the others see this worker gone
        if self.engine is not None:
            await self.engine.dispose()

    async def run_until_stopped(self) -> None:
        """Run until SIGINT or SIGTERM (also while still starting, e.g. waiting for the API)."""
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def stop_on(signum: signal.Signals) -> None:
            if not stop.is_set():
                logger.info("%s: stopping (finishing the updates taken)", signum.name)
            stop.set()

        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop_on, signum)
        starting = asyncio.create_task(self.start())
        stopping = asyncio.create_task(stop.wait())
        revoked: asyncio.Task[object] | None = None
        try:
            await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if starting.done():
                starting.result()  # a failed start raises here
                revoked = asyncio.create_task(self._bot().token_revoked.wait())
                await asyncio.wait({stopping, revoked}, return_when=asyncio.FIRST_COMPLETED)
                if (revocation := self._bot().revocation) is not None:
                    logger.error(
                        "the Bot API refused the token (%s): stopping", short_reason(revocation)
                    )
        finally:
            running = [task for task in (starting, stopping, revoked) if task is not None]
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            await self.stop()
        logger.info("stopped")
        if revoked is not None and (revocation := self._bot().revocation) is not None:
            raise TokenRevokedError(revoked_token(self.settings.api_url, revocation))

    def _bot(self) -> StampingBot:
        assert self.application is not None
        assert isinstance(self.application.bot, StampingBot)
        return self.application.bot


async def _removals_left(inbox: InboxService, bot: Bot) -> list[int]:
    """The chats whose removal of the bot a stop or a kill left unhandled in the inbox.

    Telegram refuses (403) whatever goes there, so nothing does from the start; the removal
    itself (the chat's games ending) waits for its turn in the chat's line.
    """
    removed = []
    for topic in await inbox.pending_topics():
        if topic.thread_id != 0:  # a membership update is in the chat's line, no forum topic's
            continue
        for stored in await inbox.next_in_topic(topic, TOPIC_BATCH):
            try:
                removal = removes_the_bot(Update.de_json(stored.payload, bot))
            except Exception:
                continue  # the dispatcher logs it and sets it aside
            if removal:
                removed.append(topic.chat_id)
                break
    return removed

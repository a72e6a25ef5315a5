"""Wake-up against the peers: a decision made, the waiting agent resumed. From the moment the
decision is called (each side's own decide call, or the HTTP POST) to the agent's wait returning,
on CLOCK_MONOTONIC (system-wide on Linux). Each contender keeps its decider (another process, as a
person's inbox or a replica would be) for the whole run; the contenders run in turns, a few
wake-ups each per round, and each ratio is taken round by round from the rounds' p50s."""

from __future__ import annotations

import random
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path

from cycles import EMAIL_ARGS
from metrics import Target, percentile
from output import progress
from peers_common import Row, Section, Sizes, Spread, ratio
from peers_deciders import (
    WAIT_TIMEOUT_S,
    LoopThread,
    PeerSpec,
    holdpoint_poll_interval,
    open_holdpoint,
    open_tollgate,
    peer_decider,
    tollgate_poll_interval,
    tollgate_request,
)
from postgres_server import drop_schema
from signoff import Gate, Scope, ToolCall
from wakeups import ASK_RULES, RESUME_TIMEOUT, StoreSpec, decide_now, decider_in_other_process, one_wakeup

Sample = Callable[[int], tuple[float, float]]
"""Makes a pending request, parks a waiter, decides: ms from the decide call to the waiter resumed,
and ms the decide call itself took."""

IN_PROCESS = "signoff in-process (SQLite, two threads)"
PROCESSES = "signoff across processes (SQLite)"
REPLICAS = "signoff across replicas (PostgreSQL)"
API = "signoff through the API (Gate(Client), decision POSTed)"
HOLDPOINT = "holdpoint (SQLite)"
TOLLGATE_SQLITE = "tollgate (SQLite)"
TOLLGATE_REDIS = "tollgate (Redis)"
TOLLGATE_REDIS_DURABLE = "tollgate (Redis, appendfsync always)"
TEN_TIMES_LOWER = Target(">=", 10.0)
NOT_HIGHER = Target(">=", 1.0)
RATIOS = (
    (HOLDPOINT, PROCESSES, TEN_TIMES_LOWER),
    (TOLLGATE_SQLITE, PROCESSES, TEN_TIMES_LOWER),
    (HOLDPOINT, IN_PROCESS, None),
    (TOLLGATE_SQLITE, IN_PROCESS, None),
    (TOLLGATE_REDIS, REPLICAS, NOT_HIGHER),
    (TOLLGATE_REDIS_DURABLE, REPLICAS, None),
    (TOLLGATE_REDIS, API, None),
)
"""(peer, signoff, target): the peer's p50 over signoff's."""


class Settle:
    """How long to wait, once the agent waits, before deciding: a moment, plus a random part of the
    contender's poll interval (a person decides at any point of it, not just after a poll)."""

    def __init__(self, base: float, seed: int = 19) -> None:
        self.base = base
        self.random = random.Random(seed)

    def __call__(self, poll_interval: float = 0.0) -> float:
        return self.base + self.random.uniform(0.0, poll_interval)


def timed(
    wait: Callable[[], int],
    watching: Callable[[], object],
    decide: Callable[[], tuple[int, int]],
    settle: float,
) -> tuple[float, float]:
    """`wait` blocks in a thread until resumed (returns that moment), `watching` until it waits;
    `decide` returns when it was called and when it returned."""
    resumed: list[int] = []
    waiter = threading.Thread(target=lambda: resumed.append(wait()), name="peer-waiter", daemon=True)
    waiter.start()
    watching()
    time.sleep(settle)
    called, returned = decide()
    waiter.join(RESUME_TIMEOUT)
    if not resumed:
        raise RuntimeError("the waiting agent did not resume after its decision")
    return (resumed[0] - called) / 1e6, (returned - called) / 1e6


# -- signoff ----------------------------------------------------------------------------------


@contextmanager
def signoff_local(spec: StoreSpec, other_process: bool, settle: Settle) -> Iterator[Sample]:
    store = spec.open()
    gate = Gate(store, rules=ASK_RULES)
    scope = Scope(thread_id=f"peers-{uuid.uuid4().hex[:8]}", agent="bench-agent")
    try:
        with ExitStack() as stack:
            decide = (
                stack.enter_context(decider_in_other_process(spec))
                if other_process
                else (lambda request_id: decide_now(store, request_id))
            )

            def sample(index: int) -> tuple[float, float]:
                woken = one_wakeup(gate, scope, index, decide, settle())
                return woken.total_ms, woken.decide_ms

            yield sample
    finally:
        store.close()


@contextmanager
def signoff_replicas(dsn: str, settle: Settle) -> Iterator[Sample]:
    from signoff.store.postgres import PostgresStore

    schema = f"signoff_peers_{uuid.uuid4().hex[:12]}"
    PostgresStore(dsn, schema=schema, max_size=1).close()  # makes the schema; the replicas open it
    try:
        with signoff_local(StoreSpec("postgres", dsn, schema), True, settle) as sample:
            yield sample
    finally:
        drop_schema(dsn, schema)


@contextmanager
def signoff_api(workdir: Path, settle: Settle) -> Iterator[Sample]:
    import httpx

    from server import wait_for_pending
    from server_running import auth, serving
    from signoff import Client, RuleSet

    rules = RuleSet.from_yaml("tools: {send_email: {requires_approval: true, approvers: [alice]}}")
    with serving(workdir, "peers-api") as running:
        client = Client(running.url, running.agent_token)
        gate = Gate(client, rules=rules, scope=Scope(thread_id="peers-api", agent="bench"))
        person = httpx.Client(base_url=running.url, headers=auth(running.person_token), timeout=30)

        def sample(index: int) -> tuple[float, float]:
            call = ToolCall(name="send_email", args=EMAIL_ARGS, id=f"api-{index}")
            request_ids: list[str] = []

            def wait() -> int:
                if not gate.review(call).execute:
                    raise RuntimeError("the request should have been approved")
                return time.monotonic_ns()

            def decide() -> tuple[int, int]:
                called = time.monotonic_ns()
                person.post(
                    f"/v1/requests/{request_ids[0]}/decision", json={"type": "approve"}
                ).raise_for_status()
                return called, time.monotonic_ns()

            def watching() -> None:
                request_ids.append(wait_for_pending(person, "peers-api", call.id or ""))

            return timed(wait, watching, decide, settle())

        try:
            yield sample
        finally:
            person.close()
            client.close()


# -- peers ------------------------------------------------------------------------------------


@contextmanager
def holdpoint_contender(path: Path, settle: Settle) -> Iterator[Sample]:
    hold, guarded = open_holdpoint(str(path))
    poll = holdpoint_poll_interval()
    with peer_decider(PeerSpec("holdpoint", str(path))) as decide:

        def sample(_: int) -> tuple[float, float]:
            action = guarded(**EMAIL_ARGS)
            polled = threading.Event()

            def wait() -> int:
                give_up = time.monotonic() + WAIT_TIMEOUT_S
                while time.monotonic() < give_up:
                    status = hold.get(action.id).status.value
                    polled.set()
                    if status != "pending":
                        return time.monotonic_ns()
                    time.sleep(poll)
                raise RuntimeError(f"holdpoint action {action.id} was never decided")

            return timed(
                wait, lambda: polled.wait(RESUME_TIMEOUT), lambda: decide(action.id, ""), settle(poll)
            )

        yield sample


@contextmanager
def tollgate_contender(spec: PeerSpec, settle: Settle) -> Iterator[Sample]:
    from tollgate.types import ApprovalOutcome

    loop = LoopThread()
    store = open_tollgate(spec)
    poll = tollgate_poll_interval() if spec.kind == "tollgate-sqlite" else 0.0
    agent, intent, request, request_hash = tollgate_request()
    subscribers = redis_subscribers(spec.location) if spec.kind == "tollgate-redis" else None
    try:
        with peer_decider(spec) as decide:

            def sample(_: int) -> tuple[float, float]:
                request_id: str = loop.run(
                    store.create_request(agent, intent, request, request_hash, "bench", time.time() + 3600)
                )

                async def waiting() -> int:
                    outcome = await store.wait_for_decision(request_id, WAIT_TIMEOUT_S)
                    resumed = time.monotonic_ns()
                    if outcome != ApprovalOutcome.APPROVED:
                        raise RuntimeError(f"tollgate request {request_id}: {outcome}")
                    return resumed

                def watching() -> None:
                    if subscribers is not None:  # pub/sub: decide once the waiter listens
                        subscribers(f"tollgate:approval_notify:{request_id}")

                return timed(
                    lambda: int(loop.run(waiting())),
                    watching,
                    lambda: decide(request_id, request_hash),
                    settle(poll),
                )

            yield sample
    finally:
        if spec.kind == "tollgate-redis":
            loop.run(store.close())
        else:
            store.close()
        loop.close()


def redis_subscribers(url: str) -> Callable[[str], None]:
    """Waits until a channel has a subscriber (tollgate's waiter subscribes after reading the request)."""
    import redis

    client = redis.Redis.from_url(url)

    def wait(channel: str) -> None:
        give_up = time.monotonic() + RESUME_TIMEOUT
        while not client.pubsub_numsub(channel)[0][1]:
            if time.monotonic() > give_up:
                raise RuntimeError(f"nobody subscribed to {channel}")
            time.sleep(0.0002)

    return wait


@contextmanager
def durable_redis(workdir: Path) -> Iterator[str]:
    """A private redis-server that makes each write durable before answering (AOF, fsync on every
    write): tollgate's Redis store at the durability signoff's commits have. Its URL."""
    import shutil
    import socket
    import subprocess

    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    directory = workdir / "redis-durable"
    directory.mkdir(exist_ok=True)
    server = subprocess.Popen(
        [
            *(binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(directory)),
            *("--save", "", "--appendonly", "yes", "--appendfsync", "always"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        give_up = time.monotonic() + 10
        while redis_unavailable(url) is not None:
            if server.poll() is not None or time.monotonic() > give_up:
                raise RuntimeError(f"the private redis-server did not start on port {port}")
            time.sleep(0.05)
        yield url
    finally:
        server.terminate()
        server.wait(10)


@contextmanager
def durable_tollgate(workdir: Path, settle: Settle) -> Iterator[Sample]:
    with durable_redis(workdir) as url, tollgate_contender(PeerSpec("tollgate-redis", url), settle) as sample:
        yield sample


def redis_unavailable(url: str) -> str | None:
    try:
        import redis

        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except ImportError:
        return "tollgate (Redis) skipped: the redis package is not installed (pip install 'signoff[bench]')"
    except Exception as exc:
        return f"tollgate (Redis) skipped: cannot reach {url} ({type(exc).__name__})"
    return None


# -- the section ------------------------------------------------------------------------------


def measure_wakeup(workdir: Path, sizes: Sizes, dsn: str | None, redis_url: str | None) -> Section:
    section = Section("wakeup", "Wake-up: decision called → waiting agent resumed (ms)")
    settle = Settle(sizes.wakeup_settle_s)
    wanted: dict[str, Callable[[], AbstractContextManager[Sample]] | None] = {
        IN_PROCESS: lambda: signoff_local(StoreSpec("sqlite", str(workdir / "wake-local.db")), False, settle),
        PROCESSES: lambda: signoff_local(
            StoreSpec("sqlite", str(workdir / "wake-processes.db")), True, settle
        ),
        REPLICAS: None if dsn is None else (lambda: signoff_replicas(dsn, settle)),
        API: lambda: signoff_api(workdir, settle),
        HOLDPOINT: lambda: holdpoint_contender(workdir / "wake-holdpoint.db", settle),
        TOLLGATE_SQLITE: lambda: tollgate_contender(
            PeerSpec("tollgate-sqlite", str(workdir / "wake-tollgate.db")), settle
        ),
        TOLLGATE_REDIS: None
        if redis_url is None
        else (lambda: tollgate_contender(PeerSpec("tollgate-redis", redis_url), settle)),
        TOLLGATE_REDIS_DURABLE: None if redis_url is None else (lambda: durable_tollgate(workdir, settle)),
    }
    makers = {label: make for label, make in wanted.items() if make is not None}
    with ExitStack() as stack:
        samplers: dict[str, Sample] = {}
        for label, make in makers.items():
            progress(f"peers: wake-up, starting {label}")
            samplers[label] = stack.enter_context(make())
        for sample in samplers.values():  # a warm-up each
            sample(-1)
        rounds = run_rounds(samplers, sizes)
    rows: dict[str, Row] = {}
    for label, per_round in rounds.items():
        every = [woken for values in per_round for woken, _ in values]
        decides = [decide for values in per_round for _, decide in values]
        p50s = [statistics.median(woken for woken, _ in values) for values in per_round]
        rows[label] = Row(
            label,
            "signoff" if label.startswith("signoff") else "peer",
            "ms",
            Spread.of(p50s),
            {
                "p50": percentile(every, 0.5),
                "p99": percentile(every, 0.99),
                "decide_p50": percentile(decides, 0.5),
                "samples": len(every),
            },
            p50s,
        )
    section.rows = list(rows.values())
    for peer, ours, target in RATIOS:
        if peer in rows and ours in rows:
            section.ratios.append(ratio(f"{peer} p50 / {ours} p50", rows, peer, ours, target))
    section.notes.append(
        f"{sizes.wakeup_rounds} rounds of {sizes.wakeups_per_round} wake-ups per contender, in turns, after "
        "a warm-up each; p50/p99 over all of a contender's wake-ups, min/median/max over the rounds' p50s. "
        "holdpoint has no wait call: its agent reads the action every "
        f"{holdpoint_poll_interval() * 1000:g} ms (HoldPoint's poll_interval default). tollgate's SQLite "
        "store polls every "
        f"{tollgate_poll_interval() * 1000:g} ms (its default); its Redis store waits on pub/sub. "
        f"{TOLLGATE_REDIS} is the Redis this machine runs, at its settings (appendonly no: a decision is "
        f"in memory only when tollgate answers); {TOLLGATE_REDIS_DURABLE} is a private redis-server this "
        "bench starts with appendonly yes and appendfsync always, so each decision is on disk before its "
        "call returns, as signoff's commits are. The "
        "decision comes at a random moment within a polling peer's interval (uniform), as a person's would."
    )
    return section


def run_rounds(samplers: dict[str, Sample], sizes: Sizes) -> dict[str, list[list[tuple[float, float]]]]:
    labels = list(samplers)
    rounds: dict[str, list[list[tuple[float, float]]]] = {label: [] for label in labels}
    index = 0
    for number in range(sizes.wakeup_rounds):
        progress(f"peers: wake-up round {number + 1}/{sizes.wakeup_rounds}")
        for label in labels if number % 2 == 0 else reversed(labels):
            values = []
            for _ in range(sizes.wakeups_per_round):
                values.append(samplers[label](index))
                index += 1
            rounds[label].append(values)
    return rounds

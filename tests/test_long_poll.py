"""The long-poll (`GET /v1/requests/{id}/wait`) and the gate's own waiting are woken by the
decision itself, however close behind the start of the wait it comes (issue 17, item 1).

A waiter that subscribes after its first read, or clears its wake-up after a read, misses a
decision committed in between and sees it only at its next re-read. Here the re-read is set far
beyond the waits' timeouts, and the store's safety nets for other processes' changes (SQLite's
change watcher, PostgreSQL's NOTIFY listener and its fallback poll) are off, so the in-process
wake-up is the only one: a missed wake-up shows as a wait that ends only at its timeout (and
then finds the decision)."""

from __future__ import annotations

import asyncio
import queue
import random
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from signoff import Approve, Gate, Pending, RuleSet, Scope, ToolCall
from signoff.requests import Request, RequestStatus
from signoff.server import ServerSettings
from signoff.store import Store
from signoff.waiting import present

from .live import LiveServer

ROUNDS = 300
RECHECK = 600.0
"""The long-poll's own re-read: far past every wait below, so only a wake-up ends one."""
WAIT_TIMEOUT = 30.0
WOKEN_WITHIN = WAIT_TIMEOUT / 2
"""A wait that took this long was not woken by its decision (they take milliseconds)."""
RULES = RuleSet.from_dict({"tools": {"deploy": {"requires_approval": True}}})


class Decider:
    """Decides a request once its waiter has read it (the wait has started): from another
    thread at a random offset under a millisecond after that read; or, with no offset, in the
    reading thread before the read's answer is handed back, so that the decision falls between
    the waiter's read and its sleep. The store's `get_request` is watched to know when."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._read = store.get_request
        self._jobs: queue.SimpleQueue[tuple[str, float] | None] = queue.SimpleQueue()
        self._decided = threading.Event()
        self._armed: tuple[str, float | None] | None = None
        self.errors: list[BaseException] = []
        store.get_request = self._watched_read  # type: ignore[method-assign]
        self._thread = threading.Thread(target=self._run, name="decider", daemon=True)
        self._thread.start()

    def arm(self, request_id: str, offset: float | None) -> None:
        self._decided.clear()
        self._armed = (request_id, offset)

    def decided(self) -> None:
        assert self._decided.wait(30), "the decider did not decide (the waiter never read the request)"

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join(10)
        del self._store.get_request  # the instance attribute: the class's method again

    def _watched_read(self, request_id: str) -> Request:
        request = self._read(request_id)
        armed = self._armed
        if armed is not None and armed[0] == request_id:
            self._armed = None
            if armed[1] is None:
                self._decide(request_id)
            else:
                self._jobs.put((request_id, armed[1]))
        return request

    def _decide(self, request_id: str) -> None:
        try:
            self._store.decide(request_id, Approve(), actor="alice")
        except BaseException as exc:  # reported by the test
            self.errors.append(exc)
        self._decided.set()

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            request_id, offset = job
            threading.Event().wait(offset)
            self._decide(request_id)


def offsets(seed: int) -> Iterator[tuple[int, float | None]]:
    """Each round's offset: every fourth at once (None), the rest random under a millisecond."""
    rng = random.Random(seed)
    for round_ in range(ROUNDS):
        yield round_, None if round_ % 4 == 0 else rng.uniform(0.0, 0.001)


@pytest.fixture
def push_only(store: Store, monkeypatch: pytest.MonkeyPatch) -> Store:
    """The store with its in-process wake-ups only: no source of other processes' changes."""
    monkeypatch.setattr(type(store), "_start_wakeup_source", lambda self: None)
    return store


@pytest.fixture
def decider(push_only: Store) -> Iterator[Decider]:
    decider = Decider(push_only)
    yield decider
    decider.close()
    assert decider.errors == []


@pytest.fixture
def agent(push_only: Store) -> Iterator[httpx.Client]:
    settings = ServerSettings(sweep_interval=0.2, wait_recheck=RECHECK)
    with LiveServer(push_only, settings) as server:
        server.user("alice")
        with server.client(server.user("bot", "agent")) as client:
            yield client


def test_the_long_poll_race(agent: httpx.Client, decider: Decider) -> None:
    """Decisions fired at random sub-millisecond offsets after the wait starts, hundreds of
    times: every waiter wakes on the decision, none at its re-read (which would come after the
    wait's timeout, and the wait would answer 'pending')."""
    for round_, offset in offsets(17):
        body = {"thread_id": "race", "tool_call_id": f"c{round_}", "tool": "deploy", "args": {}}
        request_id = agent.post("/v1/requests", json=body).json()["id"]
        decider.arm(request_id, offset)
        started = time.monotonic()
        waited = agent.get(f"/v1/requests/{request_id}/wait", params={"timeout": WAIT_TIMEOUT})
        took = time.monotonic() - started
        decider.decided()
        assert waited.status_code == 200, waited.text
        assert waited.json()["status"] == "approved"
        assert took < WOKEN_WITHIN, f"round {round_} ({offset=}) was not woken by its decision"


def test_the_gates_own_wait_race(store: Store, decider: Decider) -> None:
    """The same race for a gate awaiting its store (push only: no poll interval)."""
    gate = Gate(store, rules=RULES)
    for round_, offset in offsets(18):
        call, scope = ToolCall(name="deploy", args={}, id=f"g{round_}"), Scope(thread_id="race")
        pending = gate.submit(call, scope)
        assert isinstance(pending, Pending)
        decider.arm(pending.request.id, offset)
        started = time.monotonic()
        outcome = asyncio.run(gate.areview(call, scope, timeout=WAIT_TIMEOUT))
        took = time.monotonic() - started
        decider.decided()
        assert outcome.execute
        assert took < WOKEN_WITHIN, f"round {round_} ({offset=}) was not woken by its decision"
        assert store.get_request(pending.request.id).status is RequestStatus.APPROVED


class PatientUI:
    """A console UI whose person never answers: it waits until told to stop (or gives up)."""

    channel = "console"

    def __init__(self) -> None:
        self.stopped: bool | None = None
        """None: never asked; True: stopped while asking; False: gave up waiting to be stopped."""
        self.shown: list[Request] = []

    def get_decision(self, request: Request, *, stop: threading.Event, error: str | None = None) -> None:
        self.stopped = stop.wait(WAIT_TIMEOUT)

    def show_message(self, text: str) -> None:
        pass

    def show_decided(self, request: Request) -> None:
        self.shown.append(request)


def test_a_console_prompt_ends_when_the_request_was_decided_before_it_began(store: Store) -> None:
    """The request is decided elsewhere after the gate read it and before its prompt started
    watching: the prompt's watcher looks once it is subscribed, and ends the prompt."""
    pending = Gate(store, rules=RULES).submit(
        ToolCall(name="deploy", args={}, id="p1"), Scope(thread_id="ui")
    )
    assert isinstance(pending, Pending)
    store.decide(pending.request.id, Approve(), actor="alice")
    ui = PatientUI()
    current = present(store, ui, pending.request, actor="tester")
    assert ui.stopped is not False, "the prompt waited for a person although the request was decided"
    assert current.status is RequestStatus.APPROVED
    assert [request.status for request in ui.shown] == [RequestStatus.APPROVED]

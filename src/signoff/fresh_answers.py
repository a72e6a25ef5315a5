"""Answers that hold while the rules in force need no refresh, at the cost of one dict lookup.

`Gate.asks_nowhere` is every adapter's first check per call, so it is the `__getitem__` of an
`Answers` dict: a hit is one C-level lookup (no Python frame, no clock read); a miss asks the gate's
rules (`__missing__`), which refresh if due and store the answer while they may. The answers are
emptied when the rules change, and when their refresh falls due: `call_at` runs that on one daemon
thread shared by every gate, asleep until the next deadline (none while no gate reads stored rules).

A forked child has none of its parent's threads: there every `Answers` is emptied and stops
keeping answers until its gate next refreshes (which arms the child's own thread).
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
import weakref
from collections.abc import Callable

MAX_ANSWERS = 50_000
"""Tool names come from models: past this many, the answers start over."""


class Answers(dict[str, bool]):
    """Per tool name, an answer that holds until `forget`; a missing one comes from `answer`."""

    def __init__(self, answer: Callable[[str], bool], *, timeless: bool = False) -> None:
        super().__init__()
        self._answer = answer
        self.timeless = timeless
        """Rules that never need a refresh (given in code or a file): only a change empties them."""
        self.lock = threading.Lock()
        """Held to store or forget answers (never across I/O, nor while waiting for `call_at`)."""
        self.token = 0
        """Bumped by `forget`: a deadline armed for an earlier token is past its use."""
        self.keeping = timeless
        """Whether answers may be stored: something will `forget` them when they may no longer hold."""
        self._undo: list[Callable[[], None]] = []
        """What undoes the effects that stand for kept answers (`mirror`), run when they go."""
        _every[id(self)] = self

    def __missing__(self, tool: str) -> bool:
        return self._answer(tool)

    def keep(self, tool: str, answer: bool, *, still: Callable[[], bool]) -> None:
        """Store `answer` if answers are being kept and `still()` says it holds (under the lock,
        so a `forget` in between is never undone)."""
        with self.lock:
            if self.keeping and still():
                if len(self) >= MAX_ANSWERS:
                    self._empty()
                self[tool] = answer

    def mirror(self, tool: str, answer: bool, apply: Callable[[], None], undo: Callable[[], None]) -> bool:
        """If `answer` is kept for `tool`: `apply()` an effect that stands for it elsewhere (a
        plain attribute an SDK reads), and `undo()` it when the answers are emptied. Both run
        under the lock, so no effect outlives its answer. False (nothing applied) otherwise."""
        with self.lock:
            if not self.keeping or dict.get(self, tool) is not answer:
                return False
            if len(self._undo) >= MAX_ANSWERS:  # effects on objects long gone: start over
                self._empty()
                return False
            apply()
            self._undo.append(undo)
            return True

    def forget(self, *, keep_after: bool = False) -> int:
        """Empty the answers (the rules changed or are due a refresh); `keep_after`: new answers
        may be stored at once (their own forgetting is arranged). Returns the new token."""
        with self.lock:
            self._empty()
            self.token += 1
            self.keeping = keep_after
            return self.token

    def forget_if(self, token: int) -> None:
        """A deadline armed for `token` fell due: forget, unless something forgot since."""
        with self.lock:
            if token == self.token:
                self._empty()
                self.token += 1
                self.keeping = False

    def _empty(self) -> None:
        """Every answer goes, and every effect that stood for one (the lock is held)."""
        self.clear()
        undo, self._undo = self._undo, []
        for step in undo:
            step()


class _Deadlines:
    """One daemon thread for every gate: `Answers.forget_if(token)` at each deadline."""

    def __init__(self) -> None:
        self._changed = threading.Condition(threading.Lock())
        self._due: list[tuple[float, int, weakref.ref[Answers], int]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def call_at(self, deadline: float, answers: Answers, token: int) -> bool:
        """Arrange `answers.forget_if(token)` at `deadline` (monotonic); False if no thread can run it."""
        entry = (deadline, next(self._order), weakref.ref(answers), token)
        with self._changed:
            heapq.heappush(self._due, entry)
            if self._thread is None:
                thread = threading.Thread(target=self._run, name="signoff-rules-deadlines", daemon=True)
                try:
                    thread.start()
                except RuntimeError:  # no threads here (or the interpreter is shutting down)
                    self._due.remove(entry)
                    heapq.heapify(self._due)
                    return False
                self._thread = thread
            self._changed.notify()
        return True

    def _run(self) -> None:
        with self._changed:
            while True:
                now = time.monotonic()
                while self._due and self._due[0][0] <= now:
                    _, _, ref, token = heapq.heappop(self._due)
                    if (answers := ref()) is not None:
                        answers.forget_if(token)
                wait = min(self._due[0][0] - now, threading.TIMEOUT_MAX) if self._due else None
                self._changed.wait(wait)


_every: weakref.WeakValueDictionary[int, Answers] = weakref.WeakValueDictionary()
"""Every live `Answers` (by id: dicts are unhashable), for the forked child's reset."""
_deadlines = _Deadlines()


def call_at(deadline: float, answers: Answers, token: int) -> bool:
    """`answers.forget_if(token)` at `deadline` (time.monotonic), on the shared thread."""
    return _deadlines.call_at(deadline, answers, token)


def _after_fork_in_child() -> None:
    global _deadlines
    _deadlines = _Deadlines()
    for answers in list(_every.values()):
        answers.lock = threading.Lock()  # a parent's thread may have held it: gone here
        if not answers.timeless:  # their deadlines were the parent's thread's
            answers._empty()
            answers.token += 1
            answers.keeping = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

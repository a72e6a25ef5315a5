"""Who follows a server's event feed, as far as its reads go: which requests' changes it must
read (DESIGN §11: a replica reads the changes its own followers may see, not every replica's)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..identity import User


@dataclass(frozen=True)
class Followers:
    everything: bool
    """Someone may see any request (an admin, or a person: what they may see depends on each
    request's approvers, known only by reading it)."""
    creators: frozenset[str]
    """The agents following: each sees only the requests it created."""

    @classmethod
    def of(cls, users: Iterable[User]) -> Followers:
        agents: set[str] = set()
        everything = False
        for user in users:
            if user.is_agent:
                agents.add(user.name)
            else:
                everything = True
        return cls(everything, frozenset(agents))

    @property
    def nobody(self) -> bool:
        return not self.everything and not self.creators

    def want(self, creator: str | None) -> bool:
        """Whether a change to a request created by `creator` (None: not known) must be read."""
        return self.everything or creator is None or creator in self.creators

    def creators_filter(self) -> frozenset[str] | None:
        """The creators whose requests to read; None for every request."""
        return None if self.everything else self.creators

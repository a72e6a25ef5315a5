"""The fault suite: real faults on real processes (a full disk, PostgreSQL backends terminated,
servers killed, stalled clients), and what signoff promises through them."""

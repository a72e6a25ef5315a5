"""The public API is a curated, sorted `__all__` (httpx's tests/test_exported_members.py)."""

from __future__ import annotations

import inspect

import signoff


def test_all_is_sorted() -> None:
    assert signoff.__all__ == sorted(signoff.__all__)


def test_all_names_exist_and_nothing_public_is_missing() -> None:
    exported = set(signoff.__all__)
    public = {name for name in dir(signoff) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(signoff, name)).__name__ == "module"}
    assert exported - set(dir(signoff)) == set(), "names in __all__ that don't exist"
    assert public - modules - exported == set(), "public names missing from __all__"


def test_exported_members_claim_the_package() -> None:
    for name in signoff.__all__:
        member = getattr(signoff, name)
        if inspect.isclass(member) or inspect.isfunction(member):
            assert member.__module__.startswith("signoff."), f"{name} comes from {member.__module__}"


def test_the_remote_client_is_exported() -> None:
    assert {"AsyncClient", "Backend", "Client", "NotAuthenticated", "PermissionDenied", "RemoteError"} <= set(
        signoff.__all__
    )
    needed = {name for name in vars(signoff.Backend) if not name.startswith("_")}
    assert "claim_execution" in needed
    stubs = {name for name in needed if getattr(signoff.Client, name) is getattr(signoff.Backend, name)}
    assert stubs == set(), "a Client implements all a gate needs of a Store (itself or in its mixins)"
    assert issubclass(signoff.RemoteError, signoff.SignoffError)


def test_exported_classes_say_what_they_are() -> None:
    """A dataclass without its own docstring gets its generated signature as `__doc__`; `help()`
    and the editors would show that instead of what the class is for."""
    undocumented = []
    for name in signoff.__all__:
        member = getattr(signoff, name)
        if inspect.isclass(member) and (not member.__doc__ or member.__doc__.startswith(f"{name}(")):
            undocumented.append(name)
    assert undocumented == []

from __future__ import annotations

import inspect

import pytest

import signoff
from signoff import errors
from signoff.gate import Suspended


def all_error_classes() -> list[type[Exception]]:
    return [
        value
        for value in vars(errors).values()
        if inspect.isclass(value) and issubclass(value, Exception) and value.__module__ == errors.__name__
    ]


def test_every_error_has_one_root() -> None:
    classes = all_error_classes()
    assert len(classes) > 15
    for cls in classes:
        assert issubclass(cls, signoff.SignoffError), cls


def test_every_error_is_drawn_in_the_module_tree() -> None:
    tree = errors.__doc__ or ""
    for cls in all_error_classes():
        assert cls.__name__ in tree, f"{cls.__name__} is missing from the tree at the top of errors.py"


@pytest.mark.parametrize("cls", [c for c in all_error_classes() if c is not errors.AutoResumeExceeded])
def test_docstring_is_the_default_message(cls: type[signoff.SignoffError]) -> None:
    error = cls()
    assert error.message == (cls.__doc__ or "").strip()
    assert str(error) == error.message
    assert error.message


def test_http_statuses_follow_the_design() -> None:
    assert signoff.RequestNotFound.status_code == 404
    assert signoff.NotAnApprover.status_code == 403
    assert signoff.AlreadyDecided.status_code == 409
    assert signoff.RequestNotReady.status_code == 409
    assert signoff.RequestExpired.status_code == 410
    assert signoff.DecisionNotAllowed.status_code == 422
    assert signoff.InvalidArguments.status_code == 422


def test_auto_resume_exceeded_says_how_many() -> None:
    assert str(signoff.AutoResumeExceeded(7)) == "HITL auto-resume exceeded 7 attempts"


def test_suspended_is_a_signal_not_an_error() -> None:
    assert not issubclass(Suspended, signoff.SignoffError)

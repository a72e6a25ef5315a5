"""A package's public names loaded on first use (PEP 562), so that importing the package, and the
command line, pay only for the modules a caller touches.

    __getattr__, __dir__ = lazy_exports(__name__, {"Gate": "gate", ...})

The package declares the same names under `if TYPE_CHECKING:` imports, so that type checkers and
editors see them as they would plain imports.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from types import ModuleType
from typing import Any


def lazy_exports(
    package: str, origins: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level `__getattr__` and `__dir__` of `package`, whose public name `name` lives in
    its submodule `origins[name]` (relative to the package, without the leading dot)."""

    def __getattr__(name: str) -> Any:
        module = origins.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        """The public names, loaded or not, and the submodules loaded so far."""
        namespace = vars(sys.modules[package])
        loaded = {
            name for name, value in namespace.items() if isinstance(value, ModuleType) or name.startswith("_")
        }
        return sorted(set(namespace.get("__all__", origins)) | loaded)

    return __getattr__, __dir__

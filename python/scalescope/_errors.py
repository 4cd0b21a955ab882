"""Exceptions raised by scalescope: bad input names the file, the JSON path and what was expected."""


class ScalescopeError(Exception):
    """Base of scalescope's errors. ``file``, ``path`` and ``message`` are the parts of ``str(error)``."""

    def __init__(self, text: str, file: str = "", path: str = "", message: str = "") -> None:
        super().__init__(text)
        self.file = file
        self.path = path
        self.message = message or text


class InputError(ScalescopeError, ValueError):
    """Bad input (a file, a JSON field, an option): the CLI exits 2 for these."""


class SimulationError(ScalescopeError, RuntimeError):
    """The run itself failed (the CLI exits 1), e.g. a cancelled search or an unwritable output."""

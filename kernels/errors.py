"""Errors that reach the user as one line (CLI) or a message (GUI)."""


class InputError(ValueError):
    """A bad value from the user: the message names the value and what is allowed."""


class BackendUnavailable(InputError):
    """The chosen backend cannot run in this process (no GPU, simulator not selected in time)."""

"""Errors that end a mount.efs run with a message and an exit code."""


class FatalError(Exception):
    """A failure reported to the user as-is, ending the process with exit_code."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class OptionError(ValueError):
    """A mount option that cannot be parsed."""

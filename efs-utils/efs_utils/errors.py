"""Errors that end a mount.efs run with a message and an exit code."""

from typing import Optional


class FatalError(Exception):
    """A failure reported to the user as-is, ending the process with exit_code.

    As efs-utils 1.36's fatal_error does, `message` goes to stderr and `log_message` (the same text
    unless given) to the log file.
    """

    def __init__(self, message: str, exit_code: int = 1, log_message: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.log_message = message if log_message is None else log_message


class OptionError(ValueError):
    """A mount option that cannot be parsed."""


class FallbackUnavailable(FatalError):
    """The botocore fallback cannot run at all (botocore is missing): 1.36 reports it as a DNS failure."""

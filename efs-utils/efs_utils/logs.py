"""Logging of mount.efs and the watchdog: a rotating file in the log dir, warnings to stderr."""

import logging
import logging.handlers
import os
import sys

FORMAT = "%(asctime)s - %(levelname)s - %(message)s"
# Records logged with extra=FILE_ONLY go to the log file but not to stderr: the caller has already
# written the user's version of the message (efs-utils 1.36 writes stderr and its log separately).
FILE_ONLY = {"file_only": True}


def _not_file_only(record: logging.LogRecord) -> bool:
    return not getattr(record, "file_only", False)


def setup(log_dir: str, filename: str, level: str = "INFO", max_bytes: int = 1048576,
          file_count: int = 10, stderr_level: int = logging.WARNING) -> logging.Logger:
    """setup configures the root logger; an unwritable log dir leaves stderr only."""
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.setLevel(getattr(logging, level, logging.INFO))
    try:
        os.makedirs(log_dir, exist_ok=True)
        fh = logging.handlers.RotatingFileHandler(os.path.join(log_dir, filename), maxBytes=max_bytes,
                                                  backupCount=file_count)
        fh.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(fh)
    except OSError as e:
        sys.stderr.write("cannot write logs to %s: %s\n" % (log_dir, e))
    sh = logging.StreamHandler(sys.stderr)
    sh.setLevel(stderr_level)
    sh.setFormatter(logging.Formatter("%(message)s"))
    sh.addFilter(_not_file_only)
    root.addHandler(sh)
    return root


def warn_user(logger: logging.Logger, message: str) -> None:
    """warn_user writes "WARN: <message>" to stderr and the message to the log, as 1.36 warns about options."""
    sys.stderr.write("WARN: %s\n" % message)
    logger.warning(message, extra=FILE_ONLY)

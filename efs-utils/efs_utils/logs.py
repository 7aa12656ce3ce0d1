"""Logging of mount.efs and the watchdog: a rotating file in the log dir, warnings to stderr."""

import logging
import logging.handlers
import os
import sys

FORMAT = "%(asctime)s - %(levelname)s - %(message)s"


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
    root.addHandler(sh)
    return root

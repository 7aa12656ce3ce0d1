"""The NFS options mount.efs passes to mount.nfs4: efs-utils 1.36 defaults, EFS-only options removed."""

from collections import OrderedDict
from typing import Optional

from .options import EFS_ONLY_OPTIONS, Options, format_options

DEFAULTS = (
    ("rsize", "1048576"),
    ("wsize", "1048576"),
)


def nfs_options(opts: Options, tls_port: Optional[int] = None) -> str:
    """nfs_options returns the -o string for mount.nfs4.

    User options come first in their order; then nfsvers=4.1 (unless nfsvers or vers is set),
    rsize/wsize, hard (unless soft or hard), timeo=600, retrans=2, noresvport (always), and with
    TLS port=<tls_port>. EFS-only options are dropped.
    """
    out = OrderedDict(opts)
    if "nfsvers" not in out and "vers" not in out:
        out["nfsvers"] = "4.1"
    for key, value in DEFAULTS:
        if key not in out:
            out[key] = value
    if "soft" not in out and "hard" not in out:
        out["hard"] = None
    if "timeo" not in out:
        out["timeo"] = "600"
    if "retrans" not in out:
        out["retrans"] = "2"
    if "noresvport" not in out:
        out["noresvport"] = None
    if "tls" in out and tls_port is not None:
        out["port"] = str(tls_port)
    kept = OrderedDict((k, v) for k, v in out.items() if k not in EFS_ONLY_OPTIONS)
    return format_options(kept)

"""Command line and mount options of mount.efs: parsing and the efs-utils 1.36 validation rules."""

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import List, Optional

from .errors import FatalError, OptionError

Options = "OrderedDict[str, Optional[str]]"

# Options that mean something to mount.efs only; they are removed before mount.nfs4 runs.
EFS_ONLY_OPTIONS = frozenset([
    "accesspoint", "awscredsuri", "awsprofile", "az", "cafile", "crossaccount", "fsap", "iam",
    "jwtpath", "mounttargetip", "netns", "noocsp", "notls", "ocsp", "rolearn", "tls", "tlsport",
    "verify",
])

FS_ID_RE = re.compile(r"^(?P<fs_id>fs-[0-9a-f]+)$")
SPEC_RE = re.compile(r"^(?P<remote>[^:]+?)(?::(?P<path>/.*))?$")
ACCESS_POINT_RE = re.compile(r"^fsap-[0-9a-f]{17}$")
USAGE = "Usage: mount.efs <fsname> <mountpoint> [-o <options>]"


@dataclass
class Arguments:
    """Arguments is what mount(8) passed: SPEC, mount point and the -o string."""

    spec: str
    mountpoint: str
    options: str = ""
    flags: List[str] = field(default_factory=list)


def parse_arguments(argv: List[str]) -> "tuple[Optional[Arguments], Optional[str]]":
    """parse_arguments returns (arguments, None), or (None, action) for "help" and "version".

    As in efs-utils 1.36, argv[1] is SPEC and argv[2] the mount point; the options are the
    argument after the first "-o", read only when there are more than four arguments.
    """
    if "-h" in argv[1:] or "--help" in argv[1:]:
        return None, "help"
    if "--version" in argv[1:]:
        return None, "version"
    if len(argv) < 3:
        raise FatalError(USAGE)
    options = ""
    if len(argv) > 4 and "-o" in argv:
        i = argv.index("-o")
        if i + 1 >= len(argv):
            raise FatalError('"-o" needs a value. ' + USAGE)
        options = argv[i + 1]
    flags = [a for a in argv[3:] if a.startswith("-") and a != "-o" and a != options]
    return Arguments(spec=argv[1], mountpoint=argv[2], options=options, flags=flags), None


def parse_options(text: str) -> Options:
    """parse_options splits "a,b=c" into an ordered map; flags map to None.

    A value may not contain "=" (efs-utils 1.36 raises ValueError for it too).
    """
    opts = OrderedDict()  # type: OrderedDict[str, Optional[str]]
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" in item:
            parts = item.split("=")
            if len(parts) != 2:
                raise OptionError('mount option "%s": want key=value with no "=" in the value' % item)
            opts[parts[0]] = parts[1]
        else:
            opts[item] = None
    return opts


def format_options(opts: Options) -> str:
    """format_options is the inverse of parse_options."""
    return ",".join(k if v is None else "%s=%s" % (k, v) for k, v in opts.items())


def match_device(spec: str) -> "tuple[str, str]":
    """match_device splits "fs-id[:/path]" into (fs_id, path); path defaults to "/".

    A SPEC that is not a file system ID is returned unchanged as the remote; the caller
    resolves CNAMEs (resolve.match_cname).
    """
    m = SPEC_RE.match(spec)
    if not m:
        raise FatalError('device "%s": want fs-<hex id>[:/path]' % spec)
    return m.group("remote"), m.group("path") or "/"


def _fatal(msg: str) -> None:
    raise FatalError(msg)


def validate(opts: Options) -> List[str]:
    """validate applies the efs-utils 1.36 option rules, removing deprecated options in place.

    It raises FatalError for a conflict or a malformed value and returns warnings to log.
    """
    warnings = []
    if "capath" in opts:
        del opts["capath"]
        warnings.append('The "capath" option is no longer supported; it is ignored. Use "cafile" instead.')
    if "tls" in opts and "port" in opts:
        _fatal('The "port" and "tls" options are mutually exclusive')
    if "tls" in opts and "notls" in opts:
        _fatal('The "tls" and "notls" options are mutually exclusive')
    if "tlsport" in opts:
        _check_int(opts, "tlsport", 1, 65535)
    if "verify" in opts:
        _check_int(opts, "verify", 0, 4)
    if "ocsp" in opts and "noocsp" in opts:
        _fatal('The "ocsp" and "noocsp" options are mutually exclusive')
    if "accesspoint" in opts:
        if "tls" not in opts:
            _fatal('The "tls" option is required when mounting via "accesspoint"')
        if not ACCESS_POINT_RE.match(opts["accesspoint"] or ""):
            _fatal('Access Point ID "%s" is malformed: want fsap- and 17 lower-case hex digits'
                   % opts["accesspoint"])
    if "iam" in opts and "tls" not in opts:
        _fatal('The "tls" option is required when mounting via "iam"')
    if "awsprofile" in opts and "iam" not in opts:
        _fatal('The "iam" option is required when mounting with named profile option, "awsprofile"')
    if "awscredsuri" in opts:
        if "iam" not in opts:
            _fatal('The "iam" option is required when mounting with "awscredsuri"')
        if "awsprofile" in opts:
            _fatal('The "awscredsuri" and "awsprofile" options are mutually exclusive')
        if not (opts["awscredsuri"] or "").startswith("/"):
            _fatal('awscredsuri "%s" is malformed: want a path starting with "/"' % opts["awscredsuri"])
    if "mounttargetip" in opts and "crossaccount" in opts:
        _fatal('The "mounttargetip" and "crossaccount" options are mutually exclusive')
    for key in ("accesspoint", "awsprofile", "az", "cafile", "mounttargetip", "netns", "rolearn", "jwtpath"):
        if key in opts and not opts[key]:
            _fatal('mount option "%s" needs a value: %s=<value>' % (key, key))
    if ("rolearn" in opts) != ("jwtpath" in opts):
        warnings.append('"rolearn" and "jwtpath" are used only together; the one given is ignored')
    elif "rolearn" in opts and "iam" not in opts:
        warnings.append('"rolearn" and "jwtpath" are used only with "iam"; they are ignored')
    return warnings


def _check_int(opts: Options, key: str, low: int, high: int) -> None:
    raw = opts.get(key)
    try:
        value = int(raw or "")
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        _fatal('%s option [%s] is not an integer in [%d, %d]' % (key, raw, low, high))


def is_tls(opts: Options) -> bool:
    """is_tls reports whether the mount goes through a stunnel relay."""
    return "tls" in opts


def verify_level(opts: Options) -> int:
    """verify_level is the stunnel verify level: the verify option, else 2."""
    return int(opts["verify"]) if opts.get("verify") is not None else 2

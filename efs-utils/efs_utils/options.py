"""Command line and mount options of mount.efs: parsing and the efs-utils 1.36 validation rules."""

import re
from collections import OrderedDict
from typing import List, NamedTuple, Optional

from .errors import FatalError, OptionError

Options = "OrderedDict[str, Optional[str]]"

# Options that mean something to mount.efs only; they are removed before mount.nfs4 runs.
EFS_ONLY_OPTIONS = frozenset([
    "accesspoint", "awscredsuri", "awsprofile", "az", "cafile", "crossaccount", "fsap", "iam",
    "jwtpath", "mounttargetip", "netns", "noocsp", "notls", "ocsp", "rolearn", "tls", "tlsport",
    "verify",
])

FS_ID_RE = re.compile(r"^(?P<fs_id>fs-[0-9a-f]+)$")
ACCESS_POINT_RE = re.compile(r"^fsap-[0-9a-f]{17}$")
# efs-utils 1.36 usage(); printed for -h/--help (stdout, exit 0) and missing arguments (stderr, exit 1).
USAGE = "Usage: mount.efs [--version] [-h|--help] <fsname> <mountpoint> [-o <options>]"
# efs-utils 1.36 UNSUPPORTED_OPTIONS and check_unsupported_options' warning.
UNSUPPORTED_OPTIONS = ("capath",)
UNSUPPORTED_WARNING = ('The "%s" option is not supported and has been ignored, as amazon-efs-utils relies on a '
                       "built-in trust store.")


class Arguments(NamedTuple):
    """Arguments is what mount(8) passed: SPEC, mount point and the -o string."""

    spec: str
    mountpoint: str
    options: str = ""
    flags: List[str] = []  # never mutated


def early_action(argv: List[str]) -> Optional[str]:
    """early_action is "help" or "version" when argv asks for it (1.36 parse_arguments_early_exit)."""
    if "-h" in argv[1:] or "--help" in argv[1:]:
        return "help"
    if "--version" in argv[1:]:
        return "version"
    return None


def parse_arguments(argv: List[str]) -> Arguments:
    """parse_arguments reads SPEC, mount point and options as efs-utils 1.36 parse_arguments does.

    argv[1] is SPEC and argv[2] the mount point; the options are the argument after the first "-o",
    read only when there are more than four arguments and "-o" is not the last one. A missing or
    empty SPEC or mount point prints the usage (FatalError with USAGE).
    """
    spec = argv[1] if len(argv) > 1 else ""
    mountpoint = argv[2] if len(argv) > 2 else ""
    if not spec or not mountpoint:
        raise FatalError(USAGE)
    options = ""
    if len(argv) > 4 and "-o" in argv[:-1]:
        options = argv[argv.index("-o") + 1]
    flags = [a for a in argv[3:] if a.startswith("-") and a != "-o" and a != options]
    return Arguments(spec=spec, mountpoint=mountpoint, options=options, flags=flags)


def parse_options(text: str) -> Options:
    """parse_options splits "a,b=c" into an ordered map; flags map to None.

    A value may not contain "=" (efs-utils 1.36 stops with a ValueError traceback; we name the option).
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
    """match_device splits SPEC at its first ":" into (remote, path) as 1.36 does; path defaults to "/".

    A remote that is not a file system ID is resolved by the caller (cli._fs_id_from_cname).
    """
    remote, sep, path = spec.partition(":")
    return remote, path if sep else "/"


def _fatal(msg: str) -> None:
    raise FatalError(msg)


def remove_unsupported(opts: Options) -> List[str]:
    """remove_unsupported drops the options 1.36 ignores (capath) and returns 1.36's warnings for them."""
    warnings = []
    for key in UNSUPPORTED_OPTIONS:
        if key in opts:
            del opts[key]
            warnings.append(UNSUPPORTED_WARNING % key)
    return warnings


def validate(opts: Options) -> List[str]:
    """validate applies the efs-utils 1.36 option rules (check_options_validity, same order and messages).

    It raises FatalError for what 1.36 refuses, and for what makes 1.36 stop with a traceback, and returns
    warnings for values 1.36 passes on unchecked (verify and tlsport outside their ranges).
    """
    warnings = []
    if "tls" in opts:
        if "port" in opts:
            _fatal('The "port" and "tls" options are mutually exclusive')
        if "tlsport" in opts:
            port = _int_or_none(opts["tlsport"])
            if port is None:
                _fatal("tlsport option [%s] is not an integer" % opts["tlsport"])
            elif not 0 <= port <= 65535:
                # 1.36 stops with an OverflowError traceback when it binds the port
                _fatal("tlsport option [%s] is not a port number in [0, 65535]" % opts["tlsport"])
            elif port == 0:
                warnings.append("tlsport option [0]: the system picks a free port, as efs-utils 1.36 does")
        if "ocsp" in opts and "noocsp" in opts:
            _fatal('The "ocsp" and "noocsp" options are mutually exclusive')
        if "notls" in opts:
            _fatal('The "tls" and "notls" options are mutually exclusive')
        if "verify" in opts:
            level = _int_or_none(opts["verify"])
            if level is None:  # 1.36 stops with a ValueError traceback in bootstrap_tls
                _fatal("verify option [%s] is not an integer" % opts["verify"])
            elif not 0 <= level <= 4:
                warnings.append("verify option [%s] is not a stunnel verify level in [0, 4]; passed to stunnel as "
                                "given" % opts["verify"])
    if "accesspoint" in opts:
        if "tls" not in opts:
            _fatal('The "tls" option is required when mounting via "accesspoint"')
        if not ACCESS_POINT_RE.match(opts["accesspoint"] or ""):
            _fatal("Access Point ID %s is malformed" % opts["accesspoint"])
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
            _fatal("awscredsuri %s is malformed" % opts["awscredsuri"])
    # 1.36 stops with a traceback for these without a value; az, awsprofile, rolearn and jwtpath
    # without a value count as not given there and here
    for key in ("cafile", "mounttargetip", "netns"):
        if key in opts and not opts[key]:
            _fatal('mount option "%s" needs a value: %s=<value>' % (key, key))
    if bool(opts.get("rolearn")) != bool(opts.get("jwtpath")):
        warnings.append('"rolearn" and "jwtpath" are used only together; the one given is ignored')
    elif opts.get("rolearn") and "iam" not in opts:
        warnings.append('"rolearn" and "jwtpath" are used only with "iam"; they are ignored')
    return warnings


def _int_or_none(raw: Optional[str]) -> Optional[int]:
    try:
        return int(raw or "")
    except ValueError:
        return None


def is_tls(opts: Options) -> bool:
    """is_tls reports whether the mount goes through a stunnel relay."""
    return "tls" in opts


def verify_level(opts: Options) -> int:
    """verify_level is the stunnel verify level: the verify option, else 2 (validate checked it is an integer)."""
    return int(opts["verify"]) if opts.get("verify") is not None else 2


def tls_port(opts: Options) -> Optional[int]:
    """tls_port is the tlsport option with tls (validate checked it), else None: 1.36 ignores it without tls."""
    if "tls" in opts and opts.get("tlsport"):
        return int(opts["tlsport"])
    return None

import random
import string

import pytest

from . import nfsopts, options
from .errors import FatalError, OptionError

PARSE_CASES = [
    ("", []),
    ("tls", [("tls", None)]),
    ("tls,rw,tlsport=20100", [("tls", None), ("rw", None), ("tlsport", "20100")]),
    ("az=us-east-1a,,iam", [("az", "us-east-1a"), ("iam", None)]),
    ("k=", [("k", "")]),
]


@pytest.mark.parametrize("text,want", PARSE_CASES)
def test_parse_options(text, want):
    assert list(options.parse_options(text).items()) == want


def test_value_with_equals_is_rejected():
    with pytest.raises(OptionError, match='"a=b=c"'):
        options.parse_options("tls,a=b=c")


VALID = [
    "tls", "tls,tlsport=20500", "tls,verify=0,cafile=/x.pem", "tls,ocsp", "tls,iam",
    "tls,accesspoint=fsap-0123456789abcdef0", "tls,iam,awsprofile=p", "tls,iam,awscredsuri=/v2/creds",
    "az=us-east-1a", "mounttargetip=10.0.0.1", "crossaccount,tls", "tls,iam,rolearn=arn:aws:iam::1:role/r,jwtpath=/t",
    "port=2049", "notls", "netns=/proc/1/ns/net",
    # 1.36 check_options_validity checks tlsport, ocsp/noocsp and notls only with tls, and verify never:
    # these mount under 1.36 (the options are ignored without tls)
    "tlsport=abc", "tlsport=0", "verify=x", "verify=9", "ocsp,noocsp", "mounttargetip=10.0.0.1,crossaccount",
    # without a value these count as not given in 1.36 (options.get() is falsy)
    "az=", "az", "tls,iam,awsprofile", "tls,iam,rolearn=,jwtpath=",
]

# Messages of efs-utils 1.36 check_options_validity, word for word.
INVALID_136 = [
    ("tls,port=2049", 'The "port" and "tls" options are mutually exclusive'),
    ("tls,tlsport=abc", "tlsport option [abc] is not an integer"),
    ("tls,ocsp,noocsp", 'The "ocsp" and "noocsp" options are mutually exclusive'),
    ("tls,notls", 'The "tls" and "notls" options are mutually exclusive'),
    ("accesspoint=fsap-0123456789abcdef0", 'The "tls" option is required when mounting via "accesspoint"'),
    ("tls,accesspoint=fsap-123", "Access Point ID fsap-123 is malformed"),
    ("tls,accesspoint=", "Access Point ID  is malformed"),
    ("iam", 'The "tls" option is required when mounting via "iam"'),
    ("tls,awsprofile=p", 'The "iam" option is required when mounting with named profile option, "awsprofile"'),
    ("tls,awscredsuri=/x", 'The "iam" option is required when mounting with "awscredsuri"'),
    ("tls,iam,awscredsuri=/x,awsprofile=p", 'The "awscredsuri" and "awsprofile" options are mutually exclusive'),
    ("tls,iam,awscredsuri=x", "awscredsuri x is malformed"),
]

# Where 1.36 stops with a traceback (int(), bind(), os.path.exists(None)) we keep a message naming the option.
INVALID_OURS = [
    ("tls,verify=x", "verify option [x] is not an integer"),
    ("tls,tlsport=70000", "tlsport option [70000] is not a port number in [0, 65535]"),
    ("tls,tlsport=-1", "tlsport option [-1] is not a port number in [0, 65535]"),
    ("tls,cafile", 'mount option "cafile" needs a value'),
    ("mounttargetip=", 'mount option "mounttargetip" needs a value'),
]


@pytest.mark.parametrize("text", VALID)
def test_validate_accepts(text):
    options.validate(options.parse_options(text))


@pytest.mark.parametrize("text,message", INVALID_136)
def test_validate_rejects_with_136_message(text, message):
    with pytest.raises(FatalError) as e:
        options.validate(options.parse_options(text))
    assert e.value.message == message and e.value.exit_code == 1


@pytest.mark.parametrize("text,message", INVALID_OURS)
def test_validate_rejects_what_136_crashes_on(text, message):
    with pytest.raises(FatalError) as e:
        options.validate(options.parse_options(text))
    assert e.value.message.startswith(message)


@pytest.mark.parametrize("text,warning", [
    ("tls,verify=7", "verify option [7] is not a stunnel verify level in [0, 4]"),
    ("tls,verify=-1", "verify option [-1] is not a stunnel verify level in [0, 4]"),
    ("tls,tlsport=0", "tlsport option [0]: the system picks a free port"),
])
def test_range_checks_136_does_not_make_only_warn(text, warning):
    assert any(w.startswith(warning) for w in options.validate(options.parse_options(text)))


def test_tlsport_is_ignored_without_tls():
    assert options.tls_port(options.parse_options("tlsport=abc")) is None
    assert options.tls_port(options.parse_options("tls,tlsport=20500")) == 20500


def test_capath_is_removed_with_136_warning():
    opts = options.parse_options("tls,capath=/etc/ssl")
    # 1.36 check_unsupported_options
    assert options.remove_unsupported(opts) == [
        'The "capath" option is not supported and has been ignored, as amazon-efs-utils relies on a built-in '
        "trust store."]
    assert "capath" not in opts


ARGV_CASES = [
    (["mount.efs", "fs-1", "/mnt"], ("fs-1", "/mnt", "")),
    (["mount.efs", "fs-1:/a", "/mnt", "-o", "tls"], ("fs-1:/a", "/mnt", "tls")),
    (["mount.efs", "fs-1", "/mnt", "-n", "-o", "tls,iam"], ("fs-1", "/mnt", "tls,iam")),
    (["mount.efs", "fs-1", "/mnt", "-o"], ("fs-1", "/mnt", "")),  # -o read only with more than 4 args
    (["mount.efs", "fs-1", "/mnt", "-n", "-o"], ("fs-1", "/mnt", "")),  # and not when it is the last one
]


@pytest.mark.parametrize("argv,want", ARGV_CASES)
def test_parse_arguments(argv, want):
    args = options.parse_arguments(argv)
    assert (args.spec, args.mountpoint, args.options) == want


@pytest.mark.parametrize("argv", [["mount.efs"], ["mount.efs", "fs-1"], ["mount.efs", "", "/mnt"]])
def test_missing_arguments_print_136_usage(argv):
    with pytest.raises(FatalError) as e:
        options.parse_arguments(argv)
    # 1.36 usage()
    assert e.value.message == "Usage: mount.efs [--version] [-h|--help] <fsname> <mountpoint> [-o <options>]"


@pytest.mark.parametrize("flag,action", [("-h", "help"), ("--help", "help"), ("--version", "version")])
def test_help_and_version_exit_early(flag, action):
    assert options.early_action(["mount.efs", flag]) == action
    assert options.early_action(["mount.efs", "fs-1", "/mnt"]) is None


@pytest.mark.parametrize("spec,want", [
    ("fs-deadbeef", ("fs-deadbeef", "/")), ("fs-deadbeef:/a/b", ("fs-deadbeef", "/a/b")),
    ("fs-deadbeef:/", ("fs-deadbeef", "/")), ("efs.example.com:/x", ("efs.example.com", "/x")),
    # 1.36 match_device splits at the first ":" and passes the rest on as the path
    ("fs-deadbeef:a:b", ("fs-deadbeef", "a:b")), ("fs-deadbeef:", ("fs-deadbeef", "")),
])
def test_match_device(spec, want):
    assert options.match_device(spec) == want


NFS_CASES = [
    ("tls", 20100, "nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,port=20100"),
    ("", None, "nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport"),
    ("vers=4.0,soft,rsize=65536,timeo=100,retrans=5,noresvport,az=us-east-1a,mounttargetip=1.2.3.4", None,
     "vers=4.0,soft,rsize=65536,timeo=100,retrans=5,noresvport,wsize=1048576"),
    ("rw,tls,iam,accesspoint=fsap-0123456789abcdef0,noac", 20049,
     "rw,noac,nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,port=20049"),
]


@pytest.mark.parametrize("text,port,want", NFS_CASES)
def test_nfs_options(text, port, want):
    assert nfsopts.nfs_options(options.parse_options(text), port) == want


ALPHABET = string.ascii_lowercase[:6] + "=,-/:. " + "".join(sorted(options.EFS_ONLY_OPTIONS))[:20]
KEYS = sorted(options.EFS_ONLY_OPTIONS) + ["rw", "ro", "nfsvers", "vers", "soft", "hard", "port", "rsize", "x"]


def _random_text(rng):
    if rng.random() < 0.5:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40)))
    parts = []
    for _ in range(rng.randint(0, 8)):
        k = rng.choice(KEYS)
        parts.append(k if rng.random() < 0.4 else "%s=%s" % (k, rng.choice(["", "1", "20100", "abc", "/p", "a=b"])))
    return ",".join(parts)


def test_option_parsing_properties():
    """Fuzz-style property test over random option strings (fixed seed, reproducible)."""
    rng = random.Random(20260)
    for _ in range(3000):
        text = _random_text(rng)
        try:
            opts = options.parse_options(text)
        except OptionError:
            assert text.count("=") > 0
            continue
        again = options.parse_options(options.format_options(opts))
        assert again == opts, text
        try:
            options.validate(opts)
        except FatalError as e:
            assert e.message and e.exit_code == 1
            continue
        nfs = nfsopts.nfs_options(opts, 20100)
        keys = [item.split("=", 1)[0] for item in nfs.split(",")]
        assert not set(keys) & options.EFS_ONLY_OPTIONS, text
        assert "noresvport" in keys and len(keys) == len(set(keys)), text
        if "tls" in opts:
            assert "port=20100" in nfs.split(",")

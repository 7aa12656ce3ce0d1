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
]

INVALID = [
    ("tls,port=2049", 'The "port" and "tls" options are mutually exclusive'),
    ("tls,notls", 'The "tls" and "notls" options are mutually exclusive'),
    ("tls,tlsport=abc", "tlsport option [abc] is not an integer"),
    ("tls,tlsport=0", "tlsport option [0] is not an integer in [1, 65535]"),
    ("tls,verify=x", "verify option [x]"),
    ("tls,ocsp,noocsp", 'The "ocsp" and "noocsp" options are mutually exclusive'),
    ("accesspoint=fsap-0123456789abcdef0", 'The "tls" option is required when mounting via "accesspoint"'),
    ("tls,accesspoint=fsap-123", 'Access Point ID "fsap-123" is malformed'),
    ("iam", 'The "tls" option is required when mounting via "iam"'),
    ("tls,awsprofile=p", 'The "iam" option is required when mounting with named profile option, "awsprofile"'),
    ("tls,awscredsuri=/x", 'The "iam" option is required when mounting with "awscredsuri"'),
    ("tls,iam,awscredsuri=/x,awsprofile=p", 'The "awscredsuri" and "awsprofile" options are mutually exclusive'),
    ("tls,iam,awscredsuri=x", 'awscredsuri "x" is malformed'),
    ("mounttargetip=10.0.0.1,crossaccount", 'The "mounttargetip" and "crossaccount" options are mutually exclusive'),
    ("az=", 'mount option "az" needs a value'),
]


@pytest.mark.parametrize("text", VALID)
def test_validate_accepts(text):
    options.validate(options.parse_options(text))


@pytest.mark.parametrize("text,message", INVALID)
def test_validate_rejects(text, message):
    with pytest.raises(FatalError) as e:
        options.validate(options.parse_options(text))
    assert message in e.value.message


def test_capath_is_removed_with_a_warning():
    opts = options.parse_options("tls,capath=/etc/ssl")
    warnings = options.validate(opts)
    assert "capath" not in opts and "capath" in warnings[0]


ARGV_CASES = [
    (["mount.efs", "fs-1", "/mnt"], ("fs-1", "/mnt", "")),
    (["mount.efs", "fs-1:/a", "/mnt", "-o", "tls"], ("fs-1:/a", "/mnt", "tls")),
    (["mount.efs", "fs-1", "/mnt", "-n", "-o", "tls,iam"], ("fs-1", "/mnt", "tls,iam")),
    (["mount.efs", "fs-1", "/mnt", "-o"], ("fs-1", "/mnt", "")),  # -o read only with more than 4 args
]


@pytest.mark.parametrize("argv,want", ARGV_CASES)
def test_parse_arguments(argv, want):
    args, action = options.parse_arguments(argv)
    assert action is None and (args.spec, args.mountpoint, args.options) == want


@pytest.mark.parametrize("flag,action", [("-h", "help"), ("--help", "help"), ("--version", "version")])
def test_help_and_version_exit_early(flag, action):
    assert options.parse_arguments(["mount.efs", flag]) == (None, action)


@pytest.mark.parametrize("spec,want", [
    ("fs-deadbeef", ("fs-deadbeef", "/")), ("fs-deadbeef:/a/b", ("fs-deadbeef", "/a/b")),
    ("fs-deadbeef:/", ("fs-deadbeef", "/")), ("efs.example.com:/x", ("efs.example.com", "/x")),
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

"""mount.efs: `mount -t efs -o OPTS fs-id[:/path] DIR` (util-linux runs `mount.efs SPEC DIR -o OPTS`)."""

import logging
import os
import re
import socket
import sys
import threading
from typing import List, Mapping, Optional

from . import config, logs, mounttable, nfs, nfsopts, options, paths, resolve, state
from .errors import FatalError, OptionError
from .imds import IMDS
from .version import IMPLEMENTATION, VERSION

CNAME_RE = re.compile(r"^(?:(?P<az>[a-z0-9-]+)\.)?(?P<fs_id>fs-[0-9a-f]+)\.efs\.(?P<region>[a-z0-9-]+)\.(?P<suffix>.+)$")
HELP = options.USAGE + """

Mounts an Amazon EFS file system with mount.nfs4, through a local stunnel TLS relay with -o tls.
EFS options: tls, tlsport=N, verify=N, ocsp, noocsp, cafile=PATH, iam, accesspoint=fsap-ID,
awsprofile=NAME, awscredsuri=/URI, rolearn=ARN, jwtpath=FILE, az=NAME, mounttargetip=IP,
crossaccount, netns=PATH. Other options go to mount.nfs4 unchanged.
"""

log = logging.getLogger("mount.efs")


def _fs_id_from_cname(cfg: config.Config, remote: str) -> "tuple[str, Optional[str]]":
    try:
        primary, aliases, _ = socket.gethostbyname_ex(remote)
    except OSError:
        raise FatalError('Failed to resolve "%s": want a file system ID (fs-<hex>) or a DNS name of one' % remote) \
            from None
    for name in [primary] + aliases:
        m = CNAME_RE.match(name)
        if not m:
            continue
        expected = resolve.dns_name(cfg, m.group("fs_id"), m.group("region"), m.group("az"))
        if expected == name:
            return m.group("fs_id"), m.group("az")
    raise FatalError('The specified domain name "%s" did not resolve to an EFS mount target' % remote)


def _fallback(cfg: config.Config, opts: options.Options, fs_id: str, region: str, imds: IMDS,
              env: Mapping[str, str]):
    def run(_dns_name: str) -> str:
        from . import fallback
        az = opts.get("az") or imds.availability_zone()
        ip = fallback.mount_target_ip(fallback.Request(fs_id=fs_id, region=region, az=az,
                                                       profile=opts.get("awsprofile"),
                                                       fips=cfg.fips_mode_enabled()), env)
        resolve.check_ip(ip)
        return ip
    return run


def mount(argv: List[str], env: Mapping[str, str]) -> int:
    """mount runs one mount.efs invocation and returns its exit code."""
    args, action = options.parse_arguments(argv)
    if action == "help":
        sys.stdout.write(HELP)
        return 0
    if action == "version":
        sys.stdout.write("%s version: %s (%s)\n" % (os.path.basename(argv[0]), VERSION, IMPLEMENTATION))
        return 0
    assert args is not None
    if os.geteuid() != 0:
        raise FatalError("only root can run mount.efs")
    p = paths.from_env(env)
    cfg = config.load(p.config_file, env)
    logs.setup(p.log_dir, "mount.log", cfg.logging_level(), cfg.logging_max_bytes(), cfg.logging_file_count())
    try:
        opts = options.parse_options(args.options)
    except OptionError as e:
        raise FatalError(str(e)) from None
    for w in options.validate(opts):
        log.warning(w)
    remote, path = options.match_device(args.spec)
    if options.FS_ID_RE.match(remote):
        fs_id = remote
    else:
        fs_id, az = _fs_id_from_cname(cfg, remote)
        if az and "az" not in opts:
            opts["az"] = az
    log.info("mount.efs %s: mounting %s:%s at %s with options %s", VERSION, fs_id, path, args.mountpoint,
             options.format_options(opts))
    imds = IMDS(p.imds_endpoint, cfg.disable_imds_token())
    if options.is_tls(opts) and mounttable.is_nfs_mounted(mounttable.read(p.proc_mounts), args.mountpoint):
        sys.stdout.write("%s is already mounted, please run 'mount' command to verify\n" % args.mountpoint)
        return 0
    region = resolve.region(cfg, imds)
    target = resolve.resolve(cfg, opts, fs_id, region, imds, _fallback(cfg, opts, fs_id, region, imds, env))
    if options.is_tls(opts):
        _mount_tls(cfg, p, opts, fs_id, path, args.mountpoint, target, region, imds, env)
    else:
        cmd = nfs.command(p.mount_nfs4, "%s:%s" % (target.host, path), args.mountpoint,
                          nfsopts.nfs_options(opts), opts.get("netns"))
        nfs.mount(cmd, *cfg.retry_nfs_mount())
    if cfg.optimize_readahead():
        nfs.optimize_readahead(args.mountpoint, nfsopts.nfs_options(opts))
    log.info("mounted %s:%s at %s", fs_id, path, args.mountpoint)
    return 0


def _mount_tls(cfg, p, opts, fs_id, path, mountpoint, target, region, imds, env) -> None:
    from . import tls  # python3-cryptography is loaded only for TLS mounts
    name = None
    try:
        relay = tls.start_relay(cfg, p, opts, fs_id, mountpoint, target, region, imds, env)
        name = relay.name
        cmd = nfs.command(p.mount_nfs4, "127.0.0.1:%s" % path, mountpoint, nfsopts.nfs_options(opts, relay.port),
                          opts.get("netns"))
        stop = threading.Event()

        def died(err: str) -> None:
            log.error("Failed to mount %s: the TLS tunnel (stunnel) exited: %s", fs_id, err)
            state.finish(p.state_dir, relay.name)
            os._exit(1)

        tls.monitor(relay, died, stop)
        try:
            nfs.mount(cmd, *cfg.retry_nfs_mount())
        finally:
            stop.set()
    finally:
        if name is None:
            _finish_any(p.state_dir, fs_id, mountpoint)
        else:
            state.finish(p.state_dir, name)


def _finish_any(state_dir: str, fs_id: str, mountpoint: str) -> None:
    """_finish_any renames this mount's temporary state file when the relay failed to start."""
    prefix = state.TEMP_PREFIX + state.mount_name(fs_id, mountpoint, 0)[:-1]
    try:
        for entry in os.listdir(state_dir):
            if entry.startswith(prefix) and entry[len(prefix):].isdigit():
                state.finish(state_dir, entry[1:])
    except OSError:
        pass


def main(argv: Optional[List[str]] = None) -> int:
    """main is the mount.efs entry point."""
    argv = list(sys.argv if argv is None else argv)
    try:
        return mount(argv, os.environ)
    except FatalError as e:
        if logging.getLogger().handlers:
            log.error(e.message)
        else:
            sys.stderr.write(e.message + "\n")
        return e.exit_code
    except KeyboardInterrupt:
        return 130

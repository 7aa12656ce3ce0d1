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
from .version import VERSION

# efs-utils 1.36 EFS_FQDN_RE: the name a DNS name given as SPEC must resolve (CNAME) to.
EFS_FQDN_RE = re.compile(r"^((?P<az>[a-z0-9-]+)\.)?(?P<fs_id>fs-[0-9a-f]+)\.efs\."
                         r"(?P<region>[a-z0-9-]+)\.(?P<dns_name_suffix>[a-z0-9.]+)$")
CNAME_HELP_URL = "https://docs.aws.amazon.com/efs/latest/ug/mounting-fs-mount-cmd-dns-name.html"

log = logging.getLogger("mount.efs")


def _fs_id_from_cname(cfg: config.Config, remote: str, opts: options.Options, imds: IMDS) -> "tuple[str, Optional[str]]":
    """_fs_id_from_cname is 1.36 match_device for a SPEC that is not a file system ID: the name must resolve to
    exactly the DNS name of a file system (with its AZ, which must agree with the az option)."""
    try:
        primary, aliases, _ = socket.gethostbyname_ex(remote)
    except OSError:
        raise FatalError('Failed to resolve "%s" - check that the specified DNS name is a CNAME record resolving to '
                         "a valid EFS DNS name" % remote, log_message='Failed to resolve "%s"' % remote) from None
    for name in [primary] + aliases:
        m = EFS_FQDN_RE.match(name)
        if not m:
            continue
        az, fs_id = m.group("az"), m.group("fs_id")
        if az and "az" in opts and az != opts["az"]:
            raise FatalError('The hostname "%s" resolved by the specified domain name "%s" does not match the az '
                             "provided in the mount options, expected = %s, given = %s" % (name, remote, opts["az"], az))
        with_az = dict(opts)
        if az and "az" not in with_az:
            with_az["az"] = az
        if resolve.target_dns_name(cfg, with_az, fs_id, resolve.region(cfg, imds), imds) == name:
            return fs_id, az
    raise FatalError('The specified CNAME "%s" did not resolve to a valid DNS name for an EFS mount target. Please '
                     "refer to the EFS documentation for mounting with DNS names for examples: %s"
                     % (remote, CNAME_HELP_URL))


def _fallback(cfg: config.Config, opts: options.Options, fs_id: str, region: str, imds: IMDS,
              env: Mapping[str, str]):
    def run(_dns_name: str) -> str:
        from . import fallback
        az = opts.get("az") or imds.availability_zone()
        return fallback.mount_target_ip(fallback.Request(fs_id=fs_id, region=region, az=az,
                                                         profile=opts.get("awsprofile"),
                                                         fips=cfg.fips_mode_enabled()), env)
    return run


def mount(argv: List[str], env: Mapping[str, str]) -> int:
    """mount runs one mount.efs invocation and returns its exit code.

    The steps and their order are those of efs-utils 1.36 main(), so that bad input gets the same
    answer: help/version, root, config and logging, arguments and SPEC, unsupported options, option
    rules, then the mount target and the mount.
    """
    action = options.early_action(argv)
    if action == "help":
        sys.stdout.write(options.USAGE + "\n")
        return 0
    if action == "version":
        # 1.36 parse_arguments_early_exit: argv[0] as invoked, e.g. "/sbin/mount.efs Version: 1.36.0"
        sys.stdout.write("%s Version: %s\n" % (argv[0], VERSION))
        return 0
    if os.geteuid() != 0:
        raise FatalError("only root can run mount.efs")
    p = paths.from_env(env)
    cfg = config.load(p.config_file, env)
    logs.setup(p.log_dir, "mount.log", cfg.logging_level(), cfg.logging_max_bytes(), cfg.logging_file_count())
    args = options.parse_arguments(argv)
    try:
        opts = options.parse_options(args.options)
    except OptionError as e:
        raise FatalError(str(e)) from None
    imds = IMDS(p.imds_endpoint, cfg.disable_imds_token())
    remote, path = options.match_device(args.spec)
    if options.FS_ID_RE.match(remote):
        fs_id = remote
    else:
        fs_id, az = _fs_id_from_cname(cfg, remote, opts, imds)
        if az and "az" not in opts:
            opts["az"] = az
    log.info("mount.efs %s: mounting %s:%s at %s with options %s", VERSION, fs_id, path, args.mountpoint,
             options.format_options(opts))
    for w in options.remove_unsupported(opts) + options.validate(opts):
        logs.warn_user(log, w)
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
        nfs.mount(cmd, *cfg.retry_nfs_mount(), label=target.dns_name)
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

        def died() -> None:
            e = tls.tunnel_failure(fs_id, relay.proc)
            sys.stderr.write(e.message + "\n")
            log.error(e.log_message, extra=logs.FILE_ONLY)
            state.finish(p.state_dir, relay.name)
            os._exit(1)

        tls.monitor(relay, died, stop)
        try:
            # 1.36 runs stunnel and mount.nfs4 (and nsenter) with its fixed PATH (find_command_path)
            nfs.mount(cmd, *cfg.retry_nfs_mount(), label=target.dns_name, env=paths.fixed_path_env(env))
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
        # 1.36 fatal_error: the user's message on stderr, the log message in the log file
        sys.stderr.write(e.message + "\n")
        log.error(e.log_message, extra=logs.FILE_ONLY)
        return e.exit_code
    except KeyboardInterrupt:
        return 130

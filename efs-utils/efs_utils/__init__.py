"""Our implementation of the efs-utils mount helper (mount.efs) and its watchdog.

Written from the efs-utils 1.36 contract: same options, config keys, state files and stunnel
configuration, so that mounts made by either implementation are supervised by the other.
"""

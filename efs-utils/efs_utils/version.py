"""The efs-utils contract level this package implements.

VERSION is what `--version` prints and what the client certificate reports as
efs_utils_version: the EFS service sees the same client as efs-utils 1.36.
"""

VERSION = "1.36.0"

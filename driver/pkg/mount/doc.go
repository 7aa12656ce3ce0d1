// Package mount composes the efs-utils mount of a volume (source and options from the volume handle, volume
// attributes and mount options) and publishes it idempotently at a target path over k8s.io/mount-utils.
package mount

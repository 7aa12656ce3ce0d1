// Package efsutils prepares and supervises efs-utils on a node: it renders efs-utils.conf, chooses and links the
// config directory, copies the image's static files, repairs old relay configs, runs amazon-efs-mount-watchdog
// and reaps the relays orphaned to the driver.
package efsutils

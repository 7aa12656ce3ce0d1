// Package health watches the driver's dependencies (AWS credentials, the efs-utils watchdog, the node's identity)
// and reports their state in metrics and the log, never through liveness: restarting the node plugin kills every
// TLS relay on the node, and a restart cures none of these.
package health

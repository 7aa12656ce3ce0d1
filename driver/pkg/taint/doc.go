// Package taint removes the efs.csi.aws.com/agent-not-ready start-up taint from the driver's node once the node
// service is ready, so that pods using EFS volumes are scheduled only where they can be mounted.
package taint

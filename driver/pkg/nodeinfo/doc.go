// Package nodeinfo finds what NodeGetInfo reports about the node (instance ID, region, availability zone name
// and ID): from EC2 instance metadata (IMDSv2), else from the Kubernetes Node object named by CSI_NODE_NAME.
package nodeinfo

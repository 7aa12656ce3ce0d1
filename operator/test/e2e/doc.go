// Package e2e runs the operator against a real kube-apiserver and etcd (see package cluster) and checks the
// objects it writes: install from nothing, takeover from the community aws-efs-operator, credentials modes,
// management state Removed and ClusterCSIDriver deletion, SharedVolumes, and a steady state without writes.
package e2e

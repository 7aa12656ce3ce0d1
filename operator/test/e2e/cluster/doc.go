// Package cluster builds and runs Kubernetes for the end-to-end tests. Build compiles one Kubernetes version
// (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kubectl) from the Go module proxy into
// a tool cache outside the clone, shared by every suite that runs Kubernetes. Start runs etcd and kube-apiserver
// on loopback with a generated CA, admin client certificate and service-account key, and installs
// CustomResourceDefinitions; without a node nothing schedules pods, so the operator's tests assert on objects.
// The API server writes an audit log of every ServiceAccount request (AuditEvents), so tests can count what a
// driver process run with a ServiceAccount token asked for and whether RBAC allowed it.
package cluster

// Package cluster runs a real Kubernetes control plane for the operator's end-to-end tests: it builds etcd and
// kube-apiserver from the Go module proxy (cached under _output/e2e-tools/), starts them on loopback with a
// generated CA, admin client certificate and service-account key, and installs CustomResourceDefinitions. There
// is no kubelet or controller-manager: nothing schedules pods or collects garbage, so tests assert on objects. The
// API server writes an audit log of every ServiceAccount request (AuditEvents), so tests can count what a driver
// process run with a ServiceAccount token asked for and whether RBAC allowed it.
package cluster

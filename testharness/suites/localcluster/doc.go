// Package localcluster runs a real single-node Kubernetes cluster on this machine, the top of the test pyramid:
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler from package cluster (one Kubernetes version,
// built into the tool cache), and a node made of a kubelet, Debian's containerd, runc and CNI plugins. Every
// server binds to loopback and keeps its state under one directory: containerd has its own root, state and
// socket (never the system service), the kubelet its own cgroup root, the pod network its own bridge, subnet and
// IPAM directory; kube-proxy serves Services and three rules of the harness the kubernetes Service (service.go). The kubelet's root is /var/lib/kubelet, the host path the driver's DaemonSet mounts. Stop (or Down, from another process) removes what the cluster made outside that
// directory too: shims, mounts, cgroups, network namespaces, links, iptables chains and rules, and CNI cache entries.
//
// The kubelet and containerd write a few fixed host paths (/var/lib/kubelet, /var/log/containers,
// /run/containerd/s, /var/run/netns, /var/lib/cni), so one local cluster runs on a machine at a time: Start waits
// for a machine-wide lock.
package localcluster

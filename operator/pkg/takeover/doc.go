// Package takeover replaces the driver of the community aws-efs-operator when the ClusterCSIDriver is Managed. Only
// that operator's node DaemonSet is touched: efs-csi-node carrying its ownership label
// openshift.io/aws-efs-operator-owned=true (it registers the same kubelet plugin socket as ours, so the two never
// run side by side). While the community operator itself still runs it would recreate the DaemonSet at once, so
// instead of deleting it the controller reports Degraded with the command that uninstalls it. A DaemonSet hook holds
// our node DaemonSet back until the community one is gone, except while the ClusterCSIDriver is Removed or being
// deleted. The CSIDriver object is adopted by the static resources controller and SharedVolumes by the
// sharedvolume package; nothing else of the community operator is touched.
package takeover

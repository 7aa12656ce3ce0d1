// Package takeover replaces the driver of the community aws-efs-operator when the ClusterCSIDriver is Managed: it
// deletes that operator's node DaemonSet efs-csi-node, which registers the same kubelet plugin socket as ours, so
// that the two never run side by side. The CSIDriver object is adopted by the static resources controller and
// SharedVolumes by the sharedvolume package; nothing else of the community operator is touched.
package takeover

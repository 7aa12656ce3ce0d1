// Package csidriver applies the CSIDriver object efs.csi.aws.com and adopts one that another installer made (the
// community aws-efs-operator, an older operator) in place: it drops owner references (the community operator's
// points at the SharedVolume CRD, so deleting that CRD would garbage-collect the CSIDriver of a running driver) and
// updates the spec instead of deleting and recreating the object, which library-go does for any CSIDriver it did
// not create itself. Only a change of an immutable field (attachRequired, volumeLifecycleModes) recreates it.
package csidriver

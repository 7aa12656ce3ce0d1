// Package sharedvolume serves the SharedVolume API (aws-efs.managed.openshift.io/v1alpha1) of the community
// aws-efs-operator: for each SharedVolume it creates and keeps a PersistentVolume for the EFS access point and a
// PersistentVolumeClaim bound to it in the SharedVolume's namespace, reports phase and claim in status, and
// deletes both behind a finalizer. Object names, labels and the finalizer are the community operator's, so
// existing SharedVolumes are adopted with their volumes.
package sharedvolume

// Package fsref reads the file system ID that a fileSystemIdConfigRef or fileSystemIdSecretRef StorageClass
// parameter points at, from the cluster.
package fsref

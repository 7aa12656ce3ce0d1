// Package scparams reads what a StorageClass asks of a volume: its parameters, its provisioner/deleter secrets,
// and what follows from them alone (the access point root directory and the EFS client token).
package scparams

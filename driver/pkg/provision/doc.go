// Package provision plans and creates the access point behind a dynamically provisioned EFS volume: StorageClass
// parameters, GID allocation, sub-path templates, client tokens and the create/delete flows over the EFS API.
package provision

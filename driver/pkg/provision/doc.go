// Package provision creates and deletes the access point behind a dynamically provisioned EFS volume: the
// create/delete flows over the EFS API, mount-target placement and the per-access-point lock. What the request
// asks comes parsed from package scparams; GIDs come from package gidalloc.
package provision

// Package stack is the top of the test pyramid: our operator, installed from its OLM bundle (package
// bundleinstall) on the local single-node cluster (package localcluster), installs the driver and runs it as
// pods with the RBAC, volumes, sidecars and security settings it gives them. Its tests carry the build tag
// "cluster" and need the directory PrepareDir writes (the images and the bundle pinned to them), which
// `go tool mage test` prepares; this file's package code builds the images.
package stack

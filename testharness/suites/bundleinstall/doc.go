// Package bundleinstall installs an operator from its OLM registry+v1 bundle the way OLM's deployment install
// strategy does, without OLM: the ServiceAccounts, Roles, ClusterRoles and their bindings of the CSV's permissions
// and clusterPermissions, the Deployments of its install strategy, and the bundle's other manifests. The local
// cluster's stack suite installs our operator with it; OLM itself is tested elsewhere.
package bundleinstall

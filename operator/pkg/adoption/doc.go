// Package adoption finishes taking over a ClusterCSIDriver that OpenShift's own EFS operator managed before: it
// removes that operator's finalizers that no controller here owns (the 4.x operator's CSIStaticResourceController
// finalizer would otherwise block the deletion of the ClusterCSIDriver forever) and, once this operator reports its
// own conditions, the conditions only that operator wrote (its static resources controllers', its differently
// named credentials and ServiceMonitor controllers'), which would otherwise stay on the ClusterCSIDriver with stale
// messages. Everything else (objects, the finalizers and conditions of controllers with the same names) is shared
// by name and adopted as it is.
package adoption

// Package operator wires the operator together: clients and informers, the presence controller that waits for
// the ClusterCSIDriver efs.csi.aws.com, the driver's controller set built on library-go's CSI controllers (static
// resources, controller Deployment, node DaemonSet, config observer, log level, management state), the two
// CredentialsRequest controllers, the community-driver takeover, uninstall on deletion, and the SharedVolume
// controller.
package operator

// Package upstreamwriter plays the upstream driver's controller (kubernetes-sigs/aws-efs-csi-driver v3.4.1,
// commit 3fcc6bdd7533a4cfd15643b31593f7ff154584c9, pkg/driver/controller.go CreateVolume and
// pkg/driver/gid_allocator.go) against an EFS endpoint: the EFS calls its CreateVolume makes, with the values it
// sends, so tests can leave behind exactly what upstream leaves when a cluster switches drivers with a claim in
// flight, or when upstream runs beside this driver on one file system. It is written from reading upstream's
// source, not copied from it, and speaks to EFS through an unmodified aws-sdk-go-v2 client.
package upstreamwriter

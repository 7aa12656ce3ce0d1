// Package driver serves the CSI gRPC services (identity, controller, node) over a unix socket:
// each handler validates the request, calls a domain package and maps its error to a gRPC code in one place.
package driver

// Package config holds everything the operator reads from its process environment, read once at start-up:
// the operand images, the STS role ARNs (ROLEARN, NODE_ROLEARN), the FIPS mode of the host and the namespace.
// Controllers and hooks receive a Config; none of them reads the environment or /proc themselves.
package config

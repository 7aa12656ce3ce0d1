// Package hooks holds the customisations the operator applies to the driver's controller Deployment and node
// DaemonSet before library-go's workload controllers apply them: one small function per concern (FIPS, custom
// resource tags, volume metrics, node DNS policy), and the lists that combine them with the takeover package's hook
// and library-go's hooks (proxy, trusted CA bundle, replicas, secret-hash restarts) together with the
// informers each list reads.
package hooks

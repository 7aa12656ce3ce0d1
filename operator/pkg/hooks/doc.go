// Package hooks holds the customisations the operator applies to the driver's controller Deployment and node
// DaemonSet before library-go's workload controllers apply them: one small function per concern (FIPS, custom
// resource tags, volume metrics, node DNS policy, the community driver's replacement), and the lists that combine
// them with library-go's hooks (proxy, trusted CA bundle, replicas, secret-hash restarts) together with the
// informers each list reads.
package hooks

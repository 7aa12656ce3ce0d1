// Package sanity runs the kubernetes-csi sanity suite (csi-test v5) against the driver's real gRPC server, and the
// standalone csi-sanity binary against the driver process, with fakeaws behind them over HTTP.
package sanity

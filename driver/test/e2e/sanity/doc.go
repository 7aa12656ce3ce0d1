// Package sanity runs csi-sanity (csi-test v5, every spec, node included) against the driver binary in all mode
// on the real mount path: mount(8), our mount.efs, stunnel, the TLS mount target stand-in and the recorder.
package sanity

// Package perf measures CreateVolume against fakeaws with injected latency: EFS calls per volume, duplicate GIDs,
// and behaviour while access points are created and deleted behind the driver's back.
package perf

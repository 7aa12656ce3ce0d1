package storagee2e

// Focus selects the external storage tests of our driver (the suite e2e.test defines from the test driver file).
const Focus = `External.Storage \[Driver: efs\.csi\.aws\.com\]`

// Skip leaves out what cannot run on the one-node local cluster or is not for a functional run; the reasons are
// in docs/driver/kubernetes-e2e.md.
const Skip = `\[Disruptive\]|\[Serial\]|\[Slow\]|\[Feature:`

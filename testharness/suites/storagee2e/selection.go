package storagee2e

// Focus selects the external storage tests of our driver: the suite e2e.test defines from the test driver file.
const Focus = `External.Storage \[Driver: efs\.csi\.aws\.com\]`

// Skip leaves out, of the selected tests, those that cannot run on the one-node local cluster or test features EFS
// does not have; docs/driver/kubernetes-e2e.md gives the reasons test by test. [Slow] tests run: they are the
// multi-pod, subPath-escape and volume I/O tests a shared file system is used for.
//   - [Disruptive]: they stop and restart the kubelet over SSH, which the local cluster's node has no server for.
//   - [Serial]: volume limits (EFS has none), stress and performance runs, and ReadWriteOncePod preemption, which
//     needs the whole cluster to itself; the suite runs in parallel processes.
//   - [Feature:…]: snapshots, volume attributes classes, SELinux mounts and XFS sources: features EFS or this
//     kernel (no SELinux) does not have.
//   - "should not mount / map unused volumes in a pod": it lists the pod's volume directories from a privileged
//     pod that enters the mount namespace of the node's process 1 (nsenter --mount=/proc/1/ns/mnt); the test
//     machine's process 1 is its sandbox agent, whose namespaces even root cannot open ("Permission denied").
const Skip = `\[Disruptive\]|\[Serial\]|\[Feature:|should not mount / map unused volumes in a pod`

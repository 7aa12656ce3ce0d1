// Package storagee2e runs Kubernetes' external storage tests (e2e.test with --storage.testdriver) against the
// driver our operator installs on the local cluster: the test driver file (testdriver.yaml), the stand-in image
// the tests' pods run (registry.k8s.io is not reachable here), the selection of tests and why the others do not
// run, and the report of what passed, failed and was skipped.
package storagee2e

// Package konflux checks the Konflux PipelineRuns under ci/tekton against the repository: that every one parses,
// builds for linux/amd64 and linux/arm64 with images/versions.conf as build-args file, hermetically, from a
// Containerfile and context that exist, with prefetch inputs (gomod, pip, rpm) whose files exist; that every image
// has a pull-request and a push run; and that the bundle Containerfile's labels and the RPM prefetch input stay in
// step with what they mirror (Check). Ready adds what a hermetic build needs beyond the files: an RPM lock that
// resolves every package, and our component bases pinned by digest.
package konflux

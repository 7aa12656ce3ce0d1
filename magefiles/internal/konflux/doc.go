// Package konflux checks the Konflux PipelineRuns under ci/tekton against the repository: that every one parses,
// builds for the four platforms, hermetically, from a Containerfile and context that exist, with prefetch inputs
// (gomod, pip, rpm) whose files exist; that every image has a pull-request and a push run; and that the bundle
// Containerfile's labels and the RPM prefetch input stay in step with what they mirror.
package konflux

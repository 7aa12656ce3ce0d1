// Package konflux checks the Konflux PipelineRuns under .tekton/ against the repository and the facts of the
// systems that run them (Pipelines-as-Code, build-definitions, build-service nudges, hermeto, Conforma's label
// rules; each rule cites its source): every run parses, runs a Pipeline pinned by digest, fires on every file
// that feeds its component, builds for linux/amd64 and linux/arm64 reproducibly and hermetically from inputs
// that exist and that hermeto accepts; the base-to-driver nudge can flow; every image carries the labels the
// release policy requires (Check). Pending names what this machine cannot produce (the entitled RPM lock, first
// push digests) and NotOffline what no offline check can decide.
package konflux

// Package konflux checks the Konflux PipelineRuns under .tekton/ against the repository and the facts of the
// systems that run them (Pipelines-as-Code, build-definitions, build-service nudges, hermeto, Conforma's label
// rules; each rule cites its source): every run parses, runs a Pipeline pinned by digest, fires on every file
// that feeds its component, builds for linux/amd64 and linux/arm64 reproducibly and hermetically from inputs
// that exist and that hermeto accepts; every nudge (base to driver, driver and operator to the CSV and
// image-references, bundle to each OpenShift version's catalog template) can flow and no tag stands where a digest
// is required; each OpenShift version's catalog component builds that version's committed catalog on its opm base;
// every image carries the labels the release policy requires (Check). Pending names what this machine cannot
// produce (the entitled RPM lock, first push digests, catalogs rendered from the pushed bundle) and NotOffline
// what no offline check can decide.
package konflux

// Package containerfile reads the Containerfiles under images/ and operator/manifests/ with buildkit's Dockerfile
// parser (the one podman/buildah and Konflux builds agree with on quoting, continuations and ARG expansion), so
// tests can hold them and the mage assembly to the same stages, bases, file layout, entrypoint, user and labels.
package containerfile

// Package imagebuild assembles the project's multi-platform images with go-containerregistry: a base per
// platform, reproducible layers on top, an OCI config with the OpenShift labels, one image index per image, an
// OCI layout under _output/images and, when a registry is given, a push.
package imagebuild

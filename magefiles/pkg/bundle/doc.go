// Package bundle turns operator/manifests into the operator's OLM registry+v1 bundle: it pins every image by
// digest, renders the CSV template for the operator module's version, validates the result with
// github.com/operator-framework/api's validators plus the OpenShift checks of this project, writes
// _output/bundle/{manifests,metadata} and assembles the bundle image.
package bundle

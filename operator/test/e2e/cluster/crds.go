package cluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallCRDs creates (or replaces) the CustomResourceDefinitions in the given YAML documents and waits until the
// API server serves each of them.
func (c *Cluster) InstallCRDs(ctx context.Context, docs ...[]byte) error {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	var names []string
	for _, doc := range docs {
		objs, err := decodeAll(doc)
		if err != nil {
			return err
		}
		for _, u := range objs {
			if u.GetKind() != "CustomResourceDefinition" {
				return fmt.Errorf("InstallCRDs: %s %s is not a CustomResourceDefinition", u.GetKind(), u.GetName())
			}
			existing, err := dyn.Resource(crdGVR).Get(ctx, u.GetName(), metav1.GetOptions{})
			if err == nil {
				u.SetResourceVersion(existing.GetResourceVersion())
				_, err = dyn.Resource(crdGVR).Update(ctx, u, metav1.UpdateOptions{})
			} else {
				_, err = dyn.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{})
			}
			if err != nil {
				return fmt.Errorf("installing CRD %s: %w", u.GetName(), err)
			}
			names = append(names, u.GetName())
		}
	}
	for _, name := range names {
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			u, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", name, err)
		}
	}
	return nil
}

// decodeAll splits a YAML stream into objects, skipping empty documents.
func decodeAll(doc []byte) ([]*unstructured.Unstructured, error) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(doc), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if err == io.EOF {
				return out, nil
			}
			return nil, err
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

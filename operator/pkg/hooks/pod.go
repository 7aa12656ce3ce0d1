package hooks

import (
	corev1 "k8s.io/api/core/v1"
)

// DriverContainer is the name of the container running the CSI driver in both workloads.
const DriverContainer = "csi-driver"

// setEnv sets name=value on the named container, replacing an existing variable of that name. It reports whether
// the container exists.
func setEnv(spec *corev1.PodSpec, container, name, value string) bool {
	for i := range spec.Containers {
		c := &spec.Containers[i]
		if c.Name != container {
			continue
		}
		for j := range c.Env {
			if c.Env[j].Name == name {
				c.Env[j] = corev1.EnvVar{Name: name, Value: value}
				return true
			}
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
		return true
	}
	return false
}

// container returns the named container of spec, or nil.
func container(spec *corev1.PodSpec, name string) *corev1.Container {
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return &spec.Containers[i]
		}
	}
	return nil
}

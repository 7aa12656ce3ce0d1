package bundle

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace/workspacetest"
)

// resourceOf maps the kinds of operator/assets to their API group, resource and scope.
var resourceOf = map[string]struct {
	group, resource string
	namespaced      bool
}{
	"ServiceAccount":      {"", "serviceaccounts", true},
	"Service":             {"", "services", true},
	"ConfigMap":           {"", "configmaps", true},
	"Role":                {"rbac.authorization.k8s.io", "roles", true},
	"RoleBinding":         {"rbac.authorization.k8s.io", "rolebindings", true},
	"ClusterRole":         {"rbac.authorization.k8s.io", "clusterroles", false},
	"ClusterRoleBinding":  {"rbac.authorization.k8s.io", "clusterrolebindings", false},
	"PodDisruptionBudget": {"policy", "poddisruptionbudgets", true},
	"Deployment":          {"apps", "deployments", true},
	"DaemonSet":           {"apps", "daemonsets", true},
	"CSIDriver":           {"storage.k8s.io", "csidrivers", false},
	"ServiceMonitor":      {"monitoring.coreos.com", "servicemonitors", true},
	"PrometheusRule":      {"monitoring.coreos.com", "prometheusrules", true},
	"CredentialsRequest":  {"cloudcredential.openshift.io", "credentialsrequests", true},
}

// grants answers "may the operator do verb on group/resource named name", in its own namespace (namespaced) or
// anywhere (cluster rules, which also cover every namespace). As in Kubernetes, a rule with resourceNames never
// allows create: the name is not known when a create is authorized.
type grants struct{ namespaced, cluster []rbacv1.PolicyRule }

func (g grants) allows(inOwnNamespace bool, group, resource, name, verb string) bool {
	rules := g.cluster
	if inOwnNamespace {
		rules = append(slices.Clone(g.cluster), g.namespaced...)
	}
	for _, r := range rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) &&
			(len(r.ResourceNames) == 0 || (name != "" && verb != "create" && slices.Contains(r.ResourceNames, name))) {
			return true
		}
	}
	return false
}

type assetObject struct {
	file string
	obj  struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Rules   []rbacv1.PolicyRule `json:"rules"`
		RoleRef rbacv1.RoleRef      `json:"roleRef"`
	}
}

func readAssets(t *testing.T, dir string) []assetObject {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no assets in %s: %v", dir, err)
	}
	var out []assetObject
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		a := assetObject{file: filepath.Base(f)}
		if err := yaml.Unmarshal(data, &a.obj); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, a)
	}
	return out
}

// TestPermissionsCoverTheOperatorsObjects checks the CSV's RBAC against what the operator applies: every object of
// operator/assets/driver and operator/assets/operator may be created, read and updated (and the driver's deleted
// on uninstall) in its namespace, every rule of the roles it creates is held by the operator (Kubernetes refuses
// to let it grant more than it has), and every role its bindings refer to is held or bindable.
func TestPermissionsCoverTheOperatorsObjects(t *testing.T) {
	src := copySources(t, nil)
	dir := t.TempDir()
	if err := Render(src, dir, pinnedValues(t, src)); err != nil {
		t.Fatal(err)
	}
	b, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var g grants
	spec := b.CSV.Spec.InstallStrategy.StrategySpec
	for _, p := range spec.Permissions {
		g.namespaced = append(g.namespaced, p.Rules...)
	}
	for _, p := range spec.ClusterPermissions {
		g.cluster = append(g.cluster, p.Rules...)
	}
	root := workspacetest.Root(t)
	roles := map[string]bool{}
	for _, sub := range []string{"driver", "operator"} {
		for _, a := range readAssets(t, filepath.Join(root, "operator", "assets", sub)) {
			where := sub + "/" + a.file
			res, ok := resourceOf[a.obj.Kind]
			if !ok {
				t.Errorf("%s: kind %s is not in resourceOf: add it there and the permissions it needs to the CSV", where, a.obj.Kind)
				continue
			}
			own := res.namespaced && a.obj.Metadata.Namespace == "${NAMESPACE}"
			verbs := []string{"get", "create", "update"}
			if sub == "driver" && a.obj.Kind != "CredentialsRequest" {
				verbs = append(verbs, "delete")
			}
			for _, v := range verbs {
				if !g.allows(own, res.group, res.resource, a.obj.Metadata.Name, v) {
					t.Errorf("%s: the CSV does not allow %s on %s %q (group %q, namespace %q)", where, v, res.resource, a.obj.Metadata.Name, res.group, a.obj.Metadata.Namespace)
				}
			}
			for _, r := range a.obj.Rules {
				for _, grp := range r.APIGroups {
					for _, rs := range r.Resources {
						for _, v := range r.Verbs {
							names := r.ResourceNames
							if len(names) == 0 {
								names = []string{""}
							}
							for _, n := range names {
								if !g.allows(own, grp, rs, n, v) {
									t.Errorf("%s: %s %s grants %s on %s/%s %q, which the operator does not hold", where, a.obj.Kind, a.obj.Metadata.Name, v, grp, rs, n)
								}
							}
						}
					}
				}
			}
			if a.obj.Kind == "ClusterRole" || a.obj.Kind == "Role" {
				roles[a.obj.Kind+"/"+a.obj.Metadata.Name] = true
			}
		}
	}
	for _, sub := range []string{"driver", "operator"} {
		for _, a := range readAssets(t, filepath.Join(root, "operator", "assets", sub)) {
			ref := a.obj.RoleRef
			if ref.Name == "" || roles[ref.Kind+"/"+ref.Name] {
				continue
			}
			resource := strings.ToLower(ref.Kind) + "s"
			if !g.allows(ref.Kind == "Role", "rbac.authorization.k8s.io", resource, ref.Name, "bind") {
				t.Errorf("%s/%s: binds %s %s, which the operator neither creates nor may bind", sub, a.file, ref.Kind, ref.Name)
			}
		}
	}
}
